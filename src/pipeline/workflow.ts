import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { schemas } from "../schema/index.js";
import { WorkflowError } from "./errors.js";
import type { DeclaredCheck } from "./snapshot.js";
import { DEFAULT_STAGE_KIND, stageKind, stageKinds } from "./stages/index.js";
import { loadStage, seatProblem } from "./workflow-stage.js";
import { DEFAULT_WORKFLOW_PATH, type RawStage, type Stage, type Workflow } from "./workflow-types.js";

export { HARNESS_ROOT, DEFAULT_WORKFLOW_PATH, type ArtifactSpec, type RawStage, type Stage, type Workflow } from "./workflow-types.js";

interface RawWorkflow {
  name: string;
  max_attempts: number;
  stages: RawStage[];
  on_failure: { retry_stage: string };
}

/**
 * Loads a workflow JSON file (the default one when no path is given), validates it against
 * `schemas/workflow.schema.json`, checks that stage ids are unique, that `retry_stage`,
 * `verdict` and artifact schemas refer to things that exist, and that every prompt template
 * exists and uses only known placeholders. Errors name the file and the JSON path.
 */
export function loadWorkflow(path: string = DEFAULT_WORKFLOW_PATH): Workflow {
  const source = resolve(path);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(source, "utf8"));
  } catch (error) {
    throw new WorkflowError(source, "$", `is not readable JSON: ${(error as Error).message}`);
  }
  const raw = schemas().validate<RawWorkflow>("workflow", data, source);
  const known = new Set(schemas().names());
  const seen = new Set<string>();
  const stages = raw.stages.map((stage, index): Stage => {
    const at = `$.stages[${index}]`;
    if (seen.has(stage.id)) throw new WorkflowError(source, `${at}.id`, `repeats the stage id '${stage.id}'`);
    seen.add(stage.id);
    const kindName = stage.kind ?? DEFAULT_STAGE_KIND;
    const kind = stageKinds().get(kindName);
    if (!kind)
      throw new WorkflowError(
        source,
        `${at}.kind`,
        `of stage '${stage.id}' names no stage kind ('${kindName}'); the kinds are ${[...stageKinds().keys()].sort().join(", ")}`,
      );
    const problem = kind.validate(stage, index) ?? seatProblem(stage, kindName, kind.seated);
    if (problem) throw new WorkflowError(source, `${at}.${problem.field}`, problem.problem);
    return loadStage(source, at, kind.normalize?.(stage) ?? stage, kindName, kind.artifacts, known);
  });
  // A seat after the test-integrity gate could weaken the tests once the gate had looked (a planned story runs its gate after its story-level seats anyway).
  const gate = stages.findIndex((stage) => stage.kind === "integrity");
  const after = gate < 0 ? -1 : stages.findIndex((stage, index) => index > gate && stageKind(stage.kind).seated);
  if (after >= 0) {
    const seat = stages[after]?.id ?? "";
    throw new WorkflowError(
      source,
      `$.stages[${after}]`,
      `seat stage '${seat}' comes after the integrity stage '${stages[gate]?.id ?? ""}': it could change the tests after the gate looked; put the integrity stage after every seat`,
    );
  }
  if (!stages.some((stage) => stage.scope !== "story" && stageKind(stage.kind).phase === "task")) {
    throw new WorkflowError(source, "$.stages", "has no stage that runs per task (every stage has scope 'story' or plans the story)");
  }
  if (!seen.has(raw.on_failure.retry_stage)) {
    throw new WorkflowError(source, "$.on_failure.retry_stage", `names no stage of this workflow ('${raw.on_failure.retry_stage}')`);
  }
  return { source, name: raw.name, maxAttempts: raw.max_attempts, retryStage: raw.on_failure.retry_stage, stages };
}

/** The check runs a workflow's stages declare, in stage order, as each stage's kind declares them. */
export function declaredChecks(workflow: Pick<Workflow, "stages">): DeclaredCheck[] {
  return workflow.stages.flatMap((stage) => stageKind(stage.kind).checks(stage));
}

/** The stages of `workflow` that plan a story (run once before its tasks when it brings no plan). */
export function planStages(workflow: Pick<Workflow, "stages">): Stage[] {
  return workflow.stages.filter((stage) => stageKind(stage.kind).phase === "plan");
}
