/** Output of the `harness / clean-clone` check run. */
import type { StorySnapshot } from "../../pipeline/index.js";
import { boundCheckRunOutput } from "../limits.js";
import { redactSecrets } from "../redact.js";
import { formatDuration, inlineCode, policyLine, tailBlock } from "./markdown.js";
import type { CheckRunOutput, RenderOptions } from "./types.js";

/** The clean-clone result of the snapshot's current attempt, if it has one. */
export function currentCleanClone(snapshot: StorySnapshot): NonNullable<StorySnapshot["cleanClone"]> | undefined {
  return snapshot.cleanClone?.attempt === snapshot.attempt ? snapshot.cleanClone : undefined;
}

/** True when the clean-clone check ran and the suite passed in the fresh clone. */
export function cleanClonePassed(event: NonNullable<StorySnapshot["cleanClone"]>): boolean {
  return event.result.ran && event.result.exitCode === 0 && event.result.timedOut !== true;
}

/** Renders command, interpreter and version, exit code, output tail and commit; or why it did not run. */
export function renderCleanCloneCheck(snapshot: StorySnapshot, options: RenderOptions = {}): CheckRunOutput {
  const secrets = options.secrets ?? [];
  const attempt = `Attempt ${snapshot.attempt}`;
  const event = currentCleanClone(snapshot);
  if (!event) {
    const running = snapshot.outcome === "running";
    return {
      title: running ? `${attempt}: waiting` : `${attempt}: did not run`,
      summary: running
        ? "After the verifier passes, the suite runs again in a fresh clone with the change committed into it."
        : `Did not run: the story ended (${snapshot.outcome}) before the clean-clone check.`,
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
