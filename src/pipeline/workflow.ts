import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { schemas } from "../schema/index.js";
import { parseTemplate } from "./context.js";
import { WorkflowError } from "./errors.js";
import type { DeclaredCheck } from "./snapshot.js";
import { DEFAULT_STAGE_KIND, stageKind, stageKinds } from "./stages/index.js";

/** The harness's own folder: built-in workflows and prompts live under it. */
export const HARNESS_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The fixer's template when a stage's fix ladder names none. */
const FIXER_PROMPT = "prompts/fixer.md";
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
  seat: string;
  promptPath: string;
  /** The template text, checked for unknown placeholders at load time. */
  template: string;
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
  seat: string;
  prompt: string;
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
    const problem = kind.validate(stage, index);
    if (problem) throw new WorkflowError(source, `${at}.${problem.field}`, problem.problem);
    const declared = stage.artifacts ?? [];
    // What the kind always requires (a planner's plan.json) comes first, unless the stage declares it itself.
    const artifacts = [...kind.artifacts.filter((required) => !declared.some((artifact) => artifact.name === required.name)), ...declared];
    artifacts.forEach((artifact, artifactIndex) => {
      if (!known.has(artifact.schema)) {
        throw new WorkflowError(source, `${at}.artifacts[${artifactIndex}].schema`, `names no known schema ('${artifact.schema}')`);
      }
    });
    if (stage.verdict !== undefined && !artifacts.some((artifact) => artifact.name === stage.verdict)) {
      throw new WorkflowError(source, `${at}.verdict`, `names '${stage.verdict}', which is not one of the stage's artifacts`);
    }
    const promptPath = resolvePrompt(source, stage.prompt);
    if (!promptPath) throw new WorkflowError(source, `${at}.prompt`, `names a template that does not exist ('${stage.prompt}')`);
    const template = readFileSync(promptPath, "utf8");
    const unknown = parseTemplate(template).unknown;
    if (unknown.length > 0) {
      const names = unknown.map((name) => `{{${name}}}`).join(", ");
      throw new WorkflowError(source, `${at}.prompt`, `template ${promptPath} uses unknown placeholder(s) ${names}`);
    }
    const loaded: Stage = { id: stage.id, kind: kindName, seat: stage.seat, promptPath, template, artifacts };
    if (stage.gate !== undefined) loaded.gate = stage.gate;
    if (stage.verdict !== undefined) loaded.verdict = stage.verdict;
    if (stage.clean_clone !== undefined) loaded.cleanClone = stage.clean_clone;
    if (stage.scope !== undefined) loaded.scope = stage.scope;
    const fix = stage.on_fail?.fix;
    if (fix) {
      const fixPrompt = resolvePrompt(source, fix.prompt ?? FIXER_PROMPT);
      if (!fixPrompt) throw new WorkflowError(source, `${at}.on_fail.fix.prompt`, `names a template that does not exist ('${fix.prompt ?? FIXER_PROMPT}')`);
      const fixTemplate = readFileSync(fixPrompt, "utf8");
      const fixUnknown = parseTemplate(fixTemplate).unknown;
      if (fixUnknown.length > 0) throw new WorkflowError(source, `${at}.on_fail.fix.prompt`, `template ${fixPrompt} uses unknown placeholder(s) ${fixUnknown.map((name) => `{{${name}}}`).join(", ")}`);
      loaded.fix = { seat: fix.seat, maxRounds: fix.max_rounds, promptPath: fixPrompt, template: fixTemplate };
    }
    return loaded;
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

/** A prompt path resolves next to the workflow file first, then in the harness's own folder. */
function resolvePrompt(workflowFile: string, prompt: string): string | undefined {
  for (const base of [dirname(workflowFile), HARNESS_ROOT]) {
    const candidate = resolve(base, prompt);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}
