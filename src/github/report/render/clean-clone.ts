/** Output of the `harness / clean-clone` check run. */
import { taskSnapshot, type StorySnapshot, type TaskSnapshot } from "../../../pipeline/index.js";
import { boundCheckRunOutput, utf8Bytes } from "../../index.js";
import { redactSecrets } from "../../index.js";
import { cleanClonePassed } from "../../../workspace/index.js";
import { formatDuration, inlineCode, policyLine, tailBlock } from "./markdown.js";
import { singleLine, untrustedLine } from "./text.js";
import type { CheckRunOutput, RenderOptions } from "./types.js";

type CleanCloneEvent = NonNullable<TaskSnapshot["cleanClones"][string]>;

/** The stage whose clean-clone check a check run shows: the named one, else the first the workflow declares. */
export function cleanCloneStage(snapshot: StorySnapshot, stage?: string): string | undefined {
  return stage ?? snapshot.checks.find((check) => check.kind === "clean-clone")?.stage;
}

/** The clean-clone result of a task's current attempt at `stage`, if it has one. */
export function currentCleanClone(task: TaskSnapshot | undefined, stage: string | undefined): CleanCloneEvent | undefined {
  if (!task || stage === undefined) return undefined;
  const event = task.cleanClones[stage];
  return event?.attempt === task.attempt ? event : undefined;
}

/** True when the clean-clone check of `event` ran and the suite passed in the fresh clone. */
export function cleanCloneEventPassed(event: CleanCloneEvent): boolean {
  return cleanClonePassed(event.result);
}

/** Most linked folders, and most warnings, listed; the rest are counted. */
export const CLEAN_CLONE_LIST_MAX = 20;
/** Longest one listed warning or folder name, in characters. */
export const CLEAN_CLONE_ITEM_MAX_CHARS = 600;
/** Longest reason for a check that did not run, in characters. */
export const CLEAN_CLONE_REASON_MAX_CHARS = 2000;
/** Bytes each list may take, so that with a huge command the summary still has room for the output tail. */
export const CLEAN_CLONE_LIST_BYTES = 8 * 1024;

type CleanCloneResult = CleanCloneEvent["result"];

/** Rendered items while they fit {@link CLEAN_CLONE_LIST_MAX} and {@link CLEAN_CLONE_LIST_BYTES}, and a count of the rest. */
function bounded(items: readonly string[], render: (item: string) => string): string[] {
  const shown: string[] = [];
  let bytes = 0;
  for (const item of items) {
    if (shown.length === CLEAN_CLONE_LIST_MAX) break;
    const line = render(item);
    bytes += utf8Bytes(line);
    if (bytes > CLEAN_CLONE_LIST_BYTES) break;
    shown.push(line);
  }
  const rest = items.length - shown.length;
  return rest > 0 ? [...shown, `… and ${rest} more`] : shown;
}

/**
 * What the clone was made of beyond the commit: how much history it held (a shallow clone, as CI's
 * checkout) and where its dependencies came from (linked from the target, or provisioned afresh).
 */
function cloneLines(result: CleanCloneResult, secrets: readonly string[]): string[] {
  const lines: string[] = [];
  if (result.depth !== undefined)
    lines.push(`**History:** the last ${result.depth} commit${result.depth === 1 ? "" : "s"} (shallow, \`--depth ${result.depth}\`)`);
  if (result.provisioned === true) lines.push("**Dependencies:** provisioned afresh in the clone");
  else if (result.linked !== undefined) {
    const names = bounded(result.linked, (name) => inlineCode(singleLine(redactSecrets(name, secrets), CLEAN_CLONE_ITEM_MAX_CHARS)));
    lines.push(`**Linked from the target:** ${names.length > 0 ? names.join(", ") : "none"}`);
  }
  return lines;
}

/** The result's warnings as a list of neutralised, single-line, bounded items; nothing when there are none. */
function warningLines(result: CleanCloneResult, secrets: readonly string[]): string[] {
  const warnings = result.warnings ?? [];
  if (warnings.length === 0) return [];
  // Warnings name the repository's paths and link targets: untrusted text, rendered as text.
  return ["", "#### Warnings", ...bounded(warnings, (warning) => `- ${untrustedLine(redactSecrets(warning, secrets), CLEAN_CLONE_ITEM_MAX_CHARS)}`)];
}

/** ", 2 warnings" for a title, or nothing. */
function warningCount(result: CleanCloneResult): string {
  const count = result.warnings?.length ?? 0;
  return count === 0 ? "" : `, ${count} warning${count === 1 ? "" : "s"}`;
}

/**
 * Renders command, interpreter and version, exit code, commit, the clone's history and linked
 * folders, warnings and the output tail; or why it did not run.
 */
export function renderCleanCloneCheck(snapshot: StorySnapshot, options: RenderOptions = {}, target: { taskId?: string; stage?: string } = {}): CheckRunOutput {
  const secrets = options.secrets ?? [];
  const task = taskSnapshot(snapshot, target.taskId);
  const attempt = `Attempt ${task?.attempt ?? 1}`;
  const event = currentCleanClone(task, cleanCloneStage(snapshot, target.stage));
  if (!event) {
    const outcome = task?.outcome ?? snapshot.outcome;
    const running = outcome === "running";
    return {
      title: running ? `${attempt}: waiting` : `${attempt}: did not run`,
      summary: running
        ? "After verification passes, the suite runs again in a fresh clone with the change committed into it."
        : `Did not run: the story ended (${outcome}) before the clean-clone check.`,
    };
  }
  const result = event.result;
  const command = inlineCode(redactSecrets(result.command, secrets));
  if (!result.ran) {
    // The reason names the repository's paths (a symlink's name may hold newlines, headings, links, mentions): text only.
    const reason = untrustedLine(redactSecrets(result.reason ?? "no reason given", secrets), CLEAN_CLONE_REASON_MAX_CHARS);
    return {
      title: `${attempt}: did not run${warningCount(result)}`,
      summary: boundCheckRunOutput(
        [`Did not run: ${reason}`, "", `**Command:** ${command}`, ...cloneLines(result, secrets), ...warningLines(result, secrets)].join("\n"),
      ),
    };
  }
  const interpreter = result.interpreter ? `${result.interpreter}${result.interpreterVersion ? ` ${result.interpreterVersion}` : ""}` : "–";
  const exit = result.timedOut ? "timed out" : result.exitCode === undefined ? "none" : String(result.exitCode);
  const lines = [
    `**Command:** ${command}`,
    `**Interpreter:** ${inlineCode(interpreter)}`,
    `**Exit code:** ${exit}`,
    `**Commit:** ${result.commit ? inlineCode(result.commit) : "–"}`,
    `**Duration:** ${formatDuration(result.durationMs)}`,
    ...cloneLines(result, secrets),
    ...policyLine(event.policy),
    ...warningLines(result, secrets),
    "",
    "#### Output tail",
    tailBlock(result.outputTail, secrets),
  ];
  const passed = cleanCloneEventPassed(event);
  return {
    title:
      (passed ? `${attempt}: passed in a fresh clone` : `${attempt}: failed in a fresh clone (${exit === "timed out" ? exit : `exit ${exit}`})`) +
      warningCount(result),
    summary: boundCheckRunOutput(lines.join("\n")),
  };
}
