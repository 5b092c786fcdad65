/** What a workflow is, as the stages and the coordinator see it; loading it is `workflow.ts`'s. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

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
