/**
 * What is said about a story's push: while it waits (GitHub could not take it yet), and when
 * GitHub refused it for good (the blocked story's detail, and the check runs left behind).
 */
import { boundCheckRunOutput, CHECK_RUN_OUTPUT_MAX_BYTES, redactSecrets, TRUNCATION_NOTE, truncateToBytes, utf8Bytes } from "../../index.js";
import { adviceFor, RETRY_COMMAND } from "./advice.js";
import { codeBlock, inlineCode } from "./markdown.js";
import type { CheckRunOutput } from "./types.js";

export interface RefusedPush {
  branch: string;
  sha: string;
  /** GitHub's words (the `remote:` lines of git's answer). */
  refusal: string;
  /** How the run had ended before its push was refused, when the job still knows it. */
  was?: string;
  /** Whether the work was kept as a bundle, and under which name, when the job knows it. */
  bundle?: { kept: boolean; name: string };
}

/** The detail of a story blocked as `push-refused` (plain text: it is shown inside a code block or a check run's text). */
export function renderPushRefusedDetail(push: RefusedPush): string {
  const run = push.was ? ` (the run had ${push.was})` : "";
  const head = `GitHub refused the push of ${push.sha.slice(0, 12)} to ${push.branch}, so the pull request does not hold this work${run}.\n\n${push.refusal}`;
  if (!push.bundle) return head;
  return `${head}\n\n${push.bundle.kept ? `The work is kept in the run directory as ${push.bundle.name}.` : "The work could not be saved as a bundle."}`;
}

/** A check run whose story's push GitHub refused after its job ended: it says so instead of what it was going to say. */
export function renderPushRefusedCheck(branch: string, sha: string, why: string): { title: string; summary: string } {
  return {
    title: "Blocked: push-refused",
    summary: truncateToBytes(
      `GitHub refused the push of ${inlineCode(sha.slice(0, 12))} to ${inlineCode(branch)}, so the pull request does not hold this work; this check's result is withheld.\n\n` +
        `${codeBlock(why, "text")}\n\n${adviceFor("push-refused")} Comment \`${RETRY_COMMAND}\` on the pull request to run the story again.`,
      CHECK_RUN_OUTPUT_MAX_BYTES,
    ),
  };
}

/** A push waiting in the outbox: GitHub could not take it yet (a 5xx, a lost connection), and it is retried. */
export interface WaitingPush {
  branch: string;
  sha: string;
  /** What the last try got (GitHub's words, by way of git): untrusted, redacted and bounded here. */
  why: string;
}

/** How much of the last try's answer the check run quotes: enough to tell a 502 from a timeout, never the whole summary. */
export const PUSH_WAITING_WHY_MAX_BYTES = 2048;

/**
 * The story's check run while its push waits: a line saying so, and the last try's answer, above
 * what the check run showed, so the maintainer sees why it stays in progress. The check run's
 * next state (once the push went through) replaces it.
 */
export function renderPushWaitingCheck(current: CheckRunOutput, push: WaitingPush, secrets: readonly string[] = []): CheckRunOutput {
  const answer = redactSecrets(push.why, secrets).replace(/\r\n?/g, "\n").trim() || "no answer";
  const quoted = utf8Bytes(answer) > PUSH_WAITING_WHY_MAX_BYTES ? `${truncateToBytes(answer, PUSH_WAITING_WHY_MAX_BYTES)}${TRUNCATION_NOTE}` : answer;
  const line =
    `⏳ **Push waiting:** the branch's new commit ${inlineCode(push.sha.slice(0, 12))} could not be pushed to ${inlineCode(push.branch)} yet; ` +
    "the story's end is reported once it goes through. The App keeps retrying; its last try got:";
  return {
    title: "Push waiting",
    summary: boundCheckRunOutput(`${line}\n\n${codeBlock(quoted, "text")}\n\n---\n\n${current.summary}`),
    ...(current.text !== undefined ? { text: current.text } : {}),
  };
}
