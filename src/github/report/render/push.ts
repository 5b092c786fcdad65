/** What is said when GitHub refused a story's push for good: the blocked story's detail, and the check runs left behind. */
import { CHECK_RUN_OUTPUT_MAX_BYTES, truncateToBytes } from "../../index.js";
import { adviceFor, RETRY_COMMAND } from "./advice.js";
import { codeBlock, inlineCode } from "./markdown.js";

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
