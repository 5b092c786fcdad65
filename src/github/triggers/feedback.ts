/**
 * Freezing what a revision is asked to address: a review's inline comments (the webhook has the
 * body only) and another App's failing check runs (output, annotations, and for GitHub Actions
 * the failing job's log). Read once, when the trigger arrives; bounded, redacted and stripped of
 * ANSI codes before it is queued, so the job carries text fit for a prompt.
 */
import { createHash } from "node:crypto";
import type { ProbotOctokit } from "probot";
import type { CiFeedback, ReviewFeedback } from "../../queue/index.js";
import { stripAnsi } from "../../text/index.js";
import { hasStatus, keepLastBytes, redactSecrets, truncateToChars } from "../index.js";

/** The failing job's log kept for the implementer: its last 64 KiB. */
export const CI_LOG_TAIL_BYTES = 64 * 1024;
/** A review's or a check's text kept (GitHub's comment limit). */
const TEXT_MAX_CHARS = 65_536;
const MAX_COMMENTS = 100;
const MAX_ANNOTATIONS = 50;
const MAX_CHECKS = 20;
/** Conclusions that fail a suite (cancelled, skipped, neutral and action_required ask nothing of the code). */
export const FAILING_CONCLUSIONS: ReadonlySet<string> = new Set(["failure", "timed_out", "startup_failure"]);
/** The App GitHub Actions reports as: its check runs are jobs whose logs can be read. */
export const ACTIONS_APP_SLUG = "github-actions";

/** Text from GitHub or CI made fit to queue: credentials redacted, ANSI codes removed, bounded. */
function clean(text: string): string {
  return truncateToChars(redactSecrets(stripAnsi(text)), TEXT_MAX_CHARS);
}

/** A review as submitted: its body, and each inline comment with its path and line, read through the review-comments API. */
export async function freezeReview(
  octokit: ProbotOctokit,
  where: { owner: string; repo: string; pullNumber: number },
  review: { id: number; by: string; body: string | null | undefined },
): Promise<ReviewFeedback> {
  const comments = await octokit.paginate(octokit.rest.pulls.listCommentsForReview, {
    owner: where.owner,
    repo: where.repo,
    pull_number: where.pullNumber,
    review_id: review.id,
    per_page: 100,
  });
  return {
    kind: "review",
    by: review.by,
    id: review.id,
    body: clean(review.body ?? ""),
    comments: comments.slice(0, MAX_COMMENTS).map((comment) => ({
      id: comment.id,
      path: truncateToChars(comment.path, 4096),
      // A comment whose line left the diff (deleted since) has none: the path and text still stand.
      ...(typeof comment.line === "number" && comment.line > 0 ? { line: comment.line } : {}),
      body: clean(comment.body),
    })),
  };
}

/**
 * Another App's failing suite as the implementer needs it: each failing run's output and
 * annotations, and for GitHub Actions the job's last 64 KiB of log. A log that cannot be read
 * (expired, no `actions: read`) leaves the run's output alone; it never fails the trigger.
 */
export async function freezeSuite(
  octokit: ProbotOctokit,
  where: { owner: string; repo: string },
  suite: { id: number; app: string; headSha: string },
): Promise<CiFeedback> {
  const runs = await octokit.paginate(octokit.rest.checks.listForSuite, { owner: where.owner, repo: where.repo, check_suite_id: suite.id, per_page: 100 });
  const failing = runs.filter((run) => FAILING_CONCLUSIONS.has(run.conclusion ?? "")).slice(0, MAX_CHECKS);
  const checks: CiFeedback["checks"] = [];
  for (const run of failing) {
    const annotations =
      (run.output.annotations_count ?? 0) > 0
        ? (await octokit.rest.checks.listAnnotations({ owner: where.owner, repo: where.repo, check_run_id: run.id, per_page: MAX_ANNOTATIONS })).data
            .filter((annotation) => annotation.annotation_level === "failure" || annotation.annotation_level === "warning")
            .map((annotation) =>
              clean(`${annotation.path}:${annotation.start_line}: ${annotation.title ? `${annotation.title}: ` : ""}${annotation.message ?? ""}`).slice(
                0,
                4096,
              ),
            )
        : [];
    const log = suite.app === ACTIONS_APP_SLUG ? await jobLogTail(octokit, where, run.id) : undefined;
    const summary = clean(
      [run.output.title, run.output.summary, run.output.text].filter((part): part is string => typeof part === "string" && part !== "").join("\n\n"),
    );
    checks.push({
      name: truncateToChars(run.name, 1024),
      conclusion: run.conclusion ?? "failure",
      summary,
      annotations,
      ...(log !== undefined ? { log } : {}),
      signature: failureSignature(run.name, log ?? [summary, ...annotations].join("\n")),
    });
  }
  return { kind: "ci", suiteId: suite.id, app: suite.app, headSha: suite.headSha, checks };
}

/** The last 64 KiB of an Actions job's log, redacted and without ANSI codes; undefined when GitHub has none to give. */
async function jobLogTail(octokit: ProbotOctokit, where: { owner: string; repo: string }, jobId: number): Promise<string | undefined> {
  try {
    const { data } = await octokit.rest.actions.downloadJobLogsForWorkflowRun({ owner: where.owner, repo: where.repo, job_id: jobId });
    const raw = typeof data === "string" ? data : Buffer.from(data as ArrayBuffer).toString("utf8");
    // The tail first (a 10 MB log is cut before any pattern runs over it), then redaction; cut again as redaction may lengthen it.
    return keepLastBytes(redactSecrets(stripAnsi(keepLastBytes(raw, CI_LOG_TAIL_BYTES * 2))), CI_LOG_TAIL_BYTES);
  } catch (error) {
    if (hasStatus(error, 404) || hasStatus(error, 410) || hasStatus(error, 403)) return undefined;
    throw error;
  }
}

/**
 * What makes two failures of a check the same failure: its name and the last lines of its log
 * (or output), with timestamps, numbers and hashes folded, so a rerun that fails the same way
 * has the same signature whatever its run ids and times.
 */
export function failureSignature(checkName: string, text: string): string {
  const lines = text
    .split("\n")
    .map((line) =>
      line
        .replace(/^\s*\d{4}-\d\d-\d\dT[\d:.]+Z\s*/, "")
        .replace(/[0-9a-f]{7,40}/gi, "#")
        .replace(/\d+(\.\d+)?/g, "#")
        .trim(),
    )
    .filter((line) => line !== "");
  return createHash("sha256").update(checkName).update("\0").update(lines.slice(-20).join("\n")).digest("hex").slice(0, 32);
}
