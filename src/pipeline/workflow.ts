import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { schemas } from "../schema/index.js";
import { WorkflowError } from "./errors.js";
import type { DeclaredCheck } from "./snapshot.js";
import { DEFAULT_STAGE_KIND, stageKind, stageKinds } from "./stages/index.js";
import { loadStage, seatProblem } from "./workflow-stage.js";

/** The harness's own folder: built-in workflows and prompts live under it. */
export const HARNESS_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The workflow used when none is named. */
export const DEFAULT_WORKFLOW_PATH = join(HARNESS_ROOT, "workflows", "story-workflow.json");

/** An artifact a seat must leave in its artifact directory. */
export interface ArtifactSpec {
  name: string;
  /** Name of the schema in `schemas/` that validates it. */
  schema: string;
}

/** One stage as the coordinator runs it. */
export interface Stage {
  id: string;
  /** Its kind, a name in the stage-kind registry (`stages/`): what running it means. */
  kind: string;
  /** The agent seat, with its template; absent for a kind that runs no seat (`gate`, `clean-clone`). */
  seat?: string;
  promptPath?: string;
  /** The template text, checked for unknown placeholders at load time. */
  template?: string;
  artifacts: ArtifactSpec[];
  gate?: "suite";
  /** Artifact whose verdict decides the stage. */
  verdict?: string;
  /** Artifact name of the clean-clone result; its presence turns the check on. */
  cleanClone?: string;
  /** The fix ladder: a failed gate or verdict goes to this seat, then the stage runs again, up to `maxRounds`. */
  fix?: { seat: string; maxRounds: number; promptPath: string; template: string };
  /** `story`: with a plan, the stage runs once on the merged branch after the last wave instead of in every task. */
  scope?: "task" | "story";
}

/** A loaded, validated workflow. */
export interface Workflow {
  source: string;
  name: string;
  maxAttempts: number;
  retryStage: string;
  stages: Stage[];
}

/** A stage as the workflow file writes it (validated by `schemas/workflow.schema.json`). */
export interface RawStage {
  id: string;
  kind?: string;
  seat?: string;
  prompt?: string;
  artifacts?: ArtifactSpec[];
  gate?: "suite";
  verdict?: string;
  clean_clone?: string;
  scope?: "task" | "story";
  on_fail?: { fix: { seat: string; max_rounds: number; prompt?: string } };
}
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
    if (!kind) throw new WorkflowError(source, `${at}.kind`, `of stage '${stage.id}' names no stage kind ('${kindName}'); the kinds are ${[...stageKinds().keys()].sort().join(", ")}`);
    const problem = kind.validate(stage, index) ?? seatProblem(stage, kindName, kind.seated);
    if (problem) throw new WorkflowError(source, `${at}.${problem.field}`, problem.problem);
    return loadStage(source, at, kind.normalize?.(stage) ?? stage, kindName, kind.artifacts, known);
  });
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
