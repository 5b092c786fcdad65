/**
 * The `seat` kind (the default): an agent seat with its prompt, optionally behind the suite
 * gate, judged by a verdict artifact, followed by the clean-clone check, with a fix ladder.
 */
import type { DeclaredCheck } from "../../snapshot.js";
import type { StageKind } from "../kind.js";
import { seatStageBody } from "./body.js";
import { withFixLadder } from "./fix-ladder.js";

export const seatKind: StageKind = {
  name: "seat",
  phase: "task",
  artifacts: [],
  validate: () => undefined,
  // A stage with a suite gate or a verdict is a gate check, a stage with `clean_clone` also a clean-clone check.
  checks: (stage) => [
    ...(stage.gate !== undefined || stage.verdict !== undefined ? [{ stage: stage.id, kind: "gate" } satisfies DeclaredCheck] : []),
    ...(stage.cleanClone !== undefined ? [{ stage: stage.id, kind: "clean-clone" } satisfies DeclaredCheck] : []),
  ],
  run: (step) => withFixLadder(step, (round) => seatStageBody(step, round)),
};
