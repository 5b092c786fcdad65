/**
 * The stage kinds, one registration each. A workflow stage names its kind (`seat` when it
 * names none); adding a kind is one folder beside this file and one line below.
 */
import { cleanCloneKind } from "./clean-clone/index.js";
import { gateKind } from "./gate/index.js";
import { integrityKind } from "./integrity/index.js";
import type { StageKind } from "./kind.js";
import { plannerKind } from "./planner/index.js";
import { reviewKind } from "./review/index.js";
import { seatKind } from "./seat/index.js";

export { failed, type StageEvidence, type StageKind, type StageOutcome, type StageProblem, type StageStep } from "./kind.js";
export { judgeMerge, storyIntegrityBase, type MergeToJudge } from "./integrity/index.js";
export { PLAN_ARTIFACT } from "./planner/index.js";
export { REVIEW_ARTIFACT } from "./review/index.js";

/** The kind of a stage that names none. */
export const DEFAULT_STAGE_KIND = "seat";

/** Every registered kind by name (built on first use, so the kinds' modules may import the pipeline freely). */
export function stageKinds(): ReadonlyMap<string, StageKind> {
  return new Map([seatKind, plannerKind, reviewKind, gateKind, cleanCloneKind, integrityKind].map((kind) => [kind.name, kind]));
}

/** The kind `name`; the workflow loader has refused unknown kinds, so one here is a bug. */
export function stageKind(name: string): StageKind {
  const kind = stageKinds().get(name);
  if (!kind) throw new Error(`no stage kind '${name}' is registered`);
  return kind;
}
