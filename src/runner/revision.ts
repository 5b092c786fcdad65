/**
 * A revision round of a story whose pull request is open: whether it may start (`iterate`, the
 * rounds spent, the same CI failure again), the feedback as the reviser prompt shows it, and the
 * replies on the review threads it addressed. The decisions are pure; the GitHub calls are thin.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RevisionRow } from "../github/report/render/index.js";
import { boundComment, redactSecrets, truncateToChars } from "../github/index.js";
import { DEFAULT_ITERATE, type HarnessConfig, type RevisionPrompt } from "../pipeline/index.js";
import type { CiFeedback, ReviewFeedback, RevisionRequest } from "../queue/index.js";
import { codeBlock } from "../text/index.js";

/** Why a round starts nothing. */
export type RoundRefusal = { reason: "reviews-off" | "ci-off" | "rounds-spent" | "same-failure"; note: string };

/** What a trigger is called in the Revisions table. */
export function triggerLabel(request: RevisionRequest): string {
  return request.triggers
    .map((trigger) =>
      trigger.kind === "ci"
        ? `CI: ${trigger.app} (${trigger.checks.map((check) => check.name).join(", ")})`
        : trigger.kind === "review"
          ? `review by @${trigger.by}`
          : `/harness revise by @${trigger.by}`,
    )
    .join("; ");
}

/** The `<check>:<signature>` of each failure a CI round is asked to fix. */
export function ciSignatures(request: RevisionRequest): string[] {
  return request.triggers.flatMap((trigger) => (trigger.kind === "ci" ? trigger.checks.map((check) => `${check.name}:${check.signature}`) : []));
}

/**
 * Decides whether a new round may start, given the rounds already recorded. Rounds from reviews
 * and CI count together. A CI trigger whose failures are all those the last round (a CI fix round)
 * was asked to fix stops the loop: the fix did not fix it, and another round would spend the
 * budget on the same failure.
 */
export function decideRound(config: HarnessConfig, rounds: readonly RevisionRow[], request: RevisionRequest): RoundRefusal | undefined {
  const iterate = config.iterate ?? DEFAULT_ITERATE;
  const ci = request.triggers.every((trigger) => trigger.kind === "ci");
  if (ci && !iterate.ci) return { reason: "ci-off", note: "A CI failure started nothing: `iterate.ci` is off in `.github/harness.yml`." };
  if (!ci && !iterate.reviews) return { reason: "reviews-off", note: "A review started nothing: `iterate.reviews` is off in `.github/harness.yml`." };
  const last = rounds.at(-1);
  const signatures = ciSignatures(request);
  if (ci && last?.signatures && signatures.length > 0 && signatures.every((signature) => last.signatures?.includes(signature))) {
    return {
      reason: "same-failure",
      note: `The same CI check failed with the same log signature right after fix round ${last.round}: the loop stops here instead of spending another round. A person should look.`,
    };
  }
  if (rounds.length >= iterate.maxRounds) {
    return {
      reason: "rounds-spent",
      note: `\`iterate.max_rounds\` is spent (${rounds.length} of ${iterate.maxRounds} rounds): new reviews and CI failures start nothing.`,
    };
  }
  return undefined;
}

function quoted(text: string): string {
  return codeBlock(text.trim() === "" ? "(empty)" : text, "text");
}

function reviewSection(trigger: ReviewFeedback): string[] {
  const lines = [trigger.kind === "review" ? `### Review by @${trigger.by}` : `### \`/harness revise\` by @${trigger.by}`, "", quoted(trigger.body)];
  for (const comment of trigger.comments) {
    const where = comment.line !== undefined ? `${comment.path}:${comment.line}` : `${comment.path} (a line no longer in the diff)`;
    lines.push("", `- Comment ${comment.id} on \`${where}\`:`, "", quoted(comment.body));
  }
  return lines;
}

function ciSection(trigger: CiFeedback): string[] {
  const lines = [`### ${trigger.app} on ${trigger.headSha.slice(0, 12)}`];
  for (const check of trigger.checks) {
    lines.push("", `#### ${check.name}: ${check.conclusion}`, "", quoted(check.summary));
    if (check.annotations.length > 0) lines.push("", "Annotations:", "", ...check.annotations.map((annotation) => `- ${annotation}`));
    if (check.log !== undefined) lines.push("", "Last part of the job's log:", "", quoted(check.log));
  }
  return lines;
}

/** The feedback as the reviser prompt shows it. */
export function revisionPrompt(request: RevisionRequest): RevisionPrompt {
  const reviews = request.triggers.filter((trigger): trigger is ReviewFeedback => trigger.kind !== "ci");
  const ci = request.triggers.filter((trigger): trigger is CiFeedback => trigger.kind === "ci");
  return {
    ...(reviews.length > 0 ? { reviewFeedback: reviews.flatMap(reviewSection).join("\n") } : {}),
    ...(ci.length > 0 ? { ciFailure: ci.flatMap(ciSection).join("\n") } : {}),
  };
}

/** What the reviser wrote for each comment it addressed (`replies.json` in its artifact directory), when it wrote anything usable. */
export function agentReplies(runDir: string, stageId: string): Map<number, string> {
  const found = new Map<number, string>();
  const attempts = join(runDir, "attempts");
  for (let attempt = 20; attempt >= 1; attempt -= 1) {
    const file = join(attempts, String(attempt), stageId, "artifacts", "replies.json");
    if (!existsSync(file)) continue;
    try {
      const data = JSON.parse(readFileSync(file, "utf8")) as unknown;
      if (typeof data !== "object" || data === null) return found;
      for (const [key, value] of Object.entries(data)) if (/^\d+$/.test(key) && typeof value === "string") found.set(Number(key), value);
    } catch {
      // A reply file that does not parse is no reply: the thread gets the harness's own words.
    }
    return found;
  }
  return found;
}

/**
 * The reply on a review thread the round addressed: the agent's words, as text (a code block, so
 * nothing in them renders as a mention or a link), with the commit that carries the change.
 */
export function renderThreadReply(
  words: string | undefined,
  outcome: { status: "completed" | "blocked"; commit?: string },
  secrets: readonly string[],
): string {
  const head =
    outcome.status === "completed"
      ? `Addressed in ${outcome.commit ?? "the story branch"} (verified).`
      : `The revision blocked; the work so far is on the story branch${outcome.commit ? ` (${outcome.commit})` : ""}.`;
  if (words === undefined || words.trim() === "") return head;
  return boundComment(`${head}\n\nWhat the agent changed:\n\n${codeBlock(truncateToChars(redactSecrets(words, secrets), 4000), "text")}`);
}
