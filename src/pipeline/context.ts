/**
 * The context assembler: fills a prompt template's `{{placeholders}}` from data. Pure, so a
 * prompt can be tested without running anything. The set of placeholders is closed: a
 * template that names another one is refused when the workflow loads.
 */
import type { CleanCloneRecord, FailureClass } from "./events.js";
import { codeBlock, stripAnsi } from "../text/index.js";

/** Every placeholder a template may use. */
export const PLACEHOLDERS = [
  "story_id",
  "story_title",
  "story_body",
  "stage",
  "attempt",
  "max_attempts",
  "artifact_dir",
  "previous_failure",
  "previous_findings",
  "retry_guidance",
  "suite_result",
  "clean_clone_result",
  "plan_task",
  "review_feedback",
  "ci_failure",
] as const;

export type Placeholder = (typeof PLACEHOLDERS)[number];

const PATTERN = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;
const KNOWN: ReadonlySet<string> = new Set(PLACEHOLDERS);

/** The placeholders a template uses, and those among them that are unknown. */
export function parseTemplate(template: string): { used: string[]; unknown: string[] } {
  const used = [...new Set([...template.matchAll(PATTERN)].map((match) => match[1] ?? ""))];
  return { used, unknown: used.filter((name) => !KNOWN.has(name)) };
}

/** The last run of the suite gate, as the prompts show it. */
export interface SuiteEvidence {
  command: string;
  exitCode?: number;
  timedOut: boolean;
  outputTail: string;
}

/** Why the previous attempt was sent back: only evidence the harness measured or an agent wrote. */
export interface RetryEvidence {
  attempt: number;
  stage: string;
  failureClass: FailureClass;
  reason: string;
  /** The verifier's own findings and guidance, verbatim, when a verdict sent the attempt back. */
  findings?: string[];
  retryGuidance?: string;
  /** The clean-clone result itself, when the clean-clone check sent the attempt back. */
  cleanClone?: CleanCloneRecord;
}

export interface PromptContext {
  story: { id: string; title: string; body: string };
  stage: string;
  attempt: number;
  maxAttempts: number;
  artifactDir: string;
  retry?: RetryEvidence;
  suite?: SuiteEvidence;
  /** A revision round's feedback, rendered (absent: the story's first run or a re-admission). */
  revision?: RevisionPrompt;
  /** The task of the story's plan this prompt is for (absent: the story is one task). */
  task?: { id: string; title: string; description: string; files: readonly string[]; earlier: string };
}

/** What a revision round asks of the implementer, as Markdown (each "(none)" when absent). */
export interface RevisionPrompt {
  reviewFeedback?: string;
  ciFailure?: string;
}

const NONE = "(none)";

/** The value of each placeholder for a context. */
export function placeholderValues(context: PromptContext): Record<Placeholder, string> {
  const retry = context.retry;
  return {
    story_id: context.story.id,
    story_title: context.story.title,
    story_body: context.story.body.trim() === "" ? NONE : context.story.body.trim(),
    stage: context.stage,
    attempt: String(context.attempt),
    max_attempts: String(context.maxAttempts),
    artifact_dir: context.artifactDir,
    previous_failure: retry ? `Attempt ${retry.attempt} failed at stage ${retry.stage} (${retry.failureClass}): ${retry.reason}` : NONE,
    previous_findings: retry?.findings && retry.findings.length > 0 ? retry.findings.map((finding) => `- ${finding}`).join("\n") : NONE,
    retry_guidance: retry?.retryGuidance ?? NONE,
    suite_result: context.suite ? renderSuite(context.suite) : NONE,
    clean_clone_result: retry?.cleanClone ? renderCleanClone(retry.cleanClone) : NONE,
    plan_task: context.task ? renderTask(context.task) : NONE,
    review_feedback: context.revision?.reviewFeedback ?? NONE,
    ci_failure: context.revision?.ciFailure ?? NONE,
  };
}

/** Fills every placeholder of `template`; an unknown one is an error, never a blank. */
export function renderPrompt(template: string, context: PromptContext): string {
  const values = placeholderValues(context);
  return template.replace(PATTERN, (_match, name: string) => {
    if (!KNOWN.has(name)) throw new Error(`unknown placeholder {{${name}}}`);
    return values[name as Placeholder];
  });
}

function renderTask(task: NonNullable<PromptContext["task"]>): string {
  return [
    `Task \`${task.id}\`: ${task.title}`,
    ...(task.description.trim() !== "" ? ["", task.description.trim()] : []),
    "",
    "Files of the task (change nothing else):",
    "",
    ...task.files.map((file) => `- \`${file}\``),
    "",
    "What the earlier waves did:",
    "",
    task.earlier.trim() || NONE,
  ].join("\n");
}

function renderSuite(suite: SuiteEvidence): string {
  const ending = suite.timedOut ? "timed out" : `exit code ${suite.exitCode ?? "none"}`;
  return [`Command \`${suite.command}\` ended with ${ending}. Last lines of its output:`, "", codeBlock(stripAnsi(suite.outputTail), "text")].join("\n");
}

function renderCleanClone(result: CleanCloneRecord): string {
  if (!result.ran) return `The clean-clone check could not run: ${result.reason ?? "no reason recorded"}.`;
  const ending = result.timedOut ? "timed out" : `exit code ${result.exitCode ?? "none"}`;
  const facts = [
    `- Commit tested: ${result.commit ?? "unknown"}`,
    ...(result.interpreter !== undefined ? [`- Interpreter: ${result.interpreter}${result.interpreterVersion ? ` (${result.interpreterVersion})` : ""}`] : []),
  ];
  return [
    `The suite failed in a fresh clone with the change committed (command \`${result.command}\`, ${ending}).`,
    "",
    ...facts,
    "",
    "Last lines of its output there:",
    "",
    codeBlock(stripAnsi(result.outputTail ?? ""), "text"),
  ].join("\n");
}
