/**
 * The `seat` kind (the default): an agent seat with its prompt, optionally behind the suite
 * gate, judged by a verdict artifact, followed by the clean-clone check. A failure is a failed
 * attempt; fix ladders belong to the `review` and `gate` kinds.
 */
import type { DeclaredCheck } from "../../snapshot.js";
import type { StageKind } from "../kind.js";
import { seatStageBody } from "./body.js";

export const seatKind: StageKind = {
  name: "seat",
  phase: "task",
  seated: true,
  artifacts: [],
  validate: (stage) =>
    stage.on_fail !== undefined
      ? {
          field: "on_fail",
          problem: `is not an option of a seat stage ('${stage.id}'): a fix ladder belongs to a stage of kind 'review' (a failing review) or 'gate' (a red suite)`,
        }
      : undefined,
  // A stage with a suite gate or a verdict is a gate check, a stage with `clean_clone` also a clean-clone check.
  checks: (stage) => [
    ...(stage.gate !== undefined || stage.verdict !== undefined ? [{ stage: stage.id, kind: "gate" } satisfies DeclaredCheck] : []),
    ...(stage.cleanClone !== undefined ? [{ stage: stage.id, kind: "clean-clone" } satisfies DeclaredCheck] : []),
  ],
  run: (step) => seatStageBody(step),
};
