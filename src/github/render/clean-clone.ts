/** Output of the `harness / clean-clone` check run. */
import { taskSnapshot, type StorySnapshot, type TaskSnapshot } from "../../pipeline/index.js";
import { boundCheckRunOutput } from "../limits.js";
import { redactSecrets } from "../redact.js";
import { formatDuration, inlineCode, policyLine, tailBlock } from "./markdown.js";
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

/** True when the clean-clone check ran and the suite passed in the fresh clone. */
export function cleanClonePassed(event: CleanCloneEvent): boolean {
  return event.result.ran && event.result.exitCode === 0 && event.result.timedOut !== true;
}

/** Renders command, interpreter and version, exit code, output tail and commit; or why it did not run. */
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
    const reason = redactSecrets(result.reason ?? "no reason given", secrets);
    return {
      title: `${attempt}: did not run`,
      summary: boundCheckRunOutput([`Did not run: ${reason}`, "", `**Command:** ${command}`].join("\n")),
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
    ...policyLine(event.policy),
    "",
    "#### Output tail",
    tailBlock(result.outputTail, secrets),
  ];
  const passed = cleanClonePassed(event);
  return {
    title: passed ? `${attempt}: passed in a fresh clone` : `${attempt}: failed in a fresh clone (${exit === "timed out" ? exit : `exit ${exit}`})`,
    summary: boundCheckRunOutput(lines.join("\n")),
  };
}
