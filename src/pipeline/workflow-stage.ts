/** One workflow stage as it loads: the kind's defaults applied, its seat and template, artifacts and fix ladder checked. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseTemplate } from "./context.js";
import { WorkflowError } from "./errors.js";
import type { StageProblem } from "./stages/index.js";
import { HARNESS_ROOT, type ArtifactSpec, type RawStage, type Stage } from "./workflow-types.js";

/** The fixer's template when a stage's fix ladder names none. */
const FIXER_PROMPT = "prompts/fixer.md";

/** A seat kind needs its `seat` and `prompt`; a kind without a seat refuses them. */
export function seatProblem(stage: RawStage, kind: string, seated: boolean): StageProblem | undefined {
  for (const field of ["seat", "prompt"] as const) {
    if (seated && stage[field] === undefined) return { field, problem: `is required: stage '${stage.id}' of kind '${kind}' runs an agent seat` };
    if (!seated && stage[field] !== undefined) return { field, problem: `is not an option of a ${kind} stage ('${stage.id}' runs no seat)` };
  }
  return undefined;
}

/**
 * Loads stage `stage` (at JSON path `at` of workflow file `source`): the kind's required
 * artifacts first, every artifact schema known, the verdict one of the artifacts, the
 * templates present and using only known placeholders.
 */
export function loadStage(
  source: string,
  at: string,
  stage: RawStage,
  kind: string,
  required: readonly ArtifactSpec[],
  knownSchemas: ReadonlySet<string>,
): Stage {
  const declared = stage.artifacts ?? [];
  // What the kind always requires (a planner's plan.json) comes first, unless the stage declares it itself.
  const artifacts = [...required.filter((spec) => !declared.some((artifact) => artifact.name === spec.name)), ...declared];
  artifacts.forEach((artifact, artifactIndex) => {
    if (!knownSchemas.has(artifact.schema))
      throw new WorkflowError(source, `${at}.artifacts[${artifactIndex}].schema`, `names no known schema ('${artifact.schema}')`);
  });
  if (stage.verdict !== undefined && !artifacts.some((artifact) => artifact.name === stage.verdict)) {
    throw new WorkflowError(source, `${at}.verdict`, `names '${stage.verdict}', which is not one of the stage's artifacts`);
  }
  const loaded: Stage = { id: stage.id, kind, artifacts };
  if (stage.seat !== undefined && stage.prompt !== undefined) {
    const template = loadTemplate(source, `${at}.prompt`, stage.prompt);
    Object.assign(loaded, { seat: stage.seat, promptPath: template.path, template: template.text });
  }
  if (stage.gate !== undefined) loaded.gate = stage.gate;
  if (stage.verdict !== undefined) loaded.verdict = stage.verdict;
  if (stage.clean_clone !== undefined) loaded.cleanClone = stage.clean_clone;
  if (stage.scope !== undefined) loaded.scope = stage.scope;
  const fix = stage.on_fail?.fix;
  if (fix) {
    const template = loadTemplate(source, `${at}.on_fail.fix.prompt`, fix.prompt ?? FIXER_PROMPT);
    loaded.fix = { seat: fix.seat, maxRounds: fix.max_rounds, promptPath: template.path, template: template.text };
  }
  return loaded;
}

/** A template by its path in the workflow, checked for unknown placeholders. */
function loadTemplate(source: string, at: string, prompt: string): { path: string; text: string } {
  const path = resolvePrompt(source, prompt);
  if (!path) throw new WorkflowError(source, at, `names a template that does not exist ('${prompt}')`);
  const text = readFileSync(path, "utf8");
  const unknown = parseTemplate(text).unknown;
  if (unknown.length > 0)
    throw new WorkflowError(source, at, `template ${path} uses unknown placeholder(s) ${unknown.map((name) => `{{${name}}}`).join(", ")}`);
  return { path, text };
}

/** A prompt path resolves next to the workflow file first, then in the harness's own folder. */
function resolvePrompt(workflowFile: string, prompt: string): string | undefined {
  for (const base of [dirname(workflowFile), HARNESS_ROOT]) {
    const candidate = resolve(base, prompt);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}
