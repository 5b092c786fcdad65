/** What a test does on the fake as people and other Apps would: submit reviews, run CI suites, leave job logs. */
import { randomBytes } from "node:crypto";
import type { FakeContext } from "./http.js";
import { otherAppJson } from "./review-shapes.js";
import {
  nodeId,
  timestamp,
  type CheckAnnotationRecord,
  type CheckRunRecord,
  type CheckSuiteRecord,
  type RepoRecord,
  type ReviewCommentRecord,
  type ReviewRecord,
} from "./state.js";

/** A review as a person submits it: its body and inline comments (`line: null` for a comment on a line no longer in the diff). */
export interface ReviewSpec {
  user: string;
  state: ReviewRecord["state"];
  body?: string;
  commitId: string;
  comments?: { path: string; line: number | null; body: string }[];
}

/** Records a submitted review and its inline comments. */
export function submitReview(
  ctx: FakeContext,
  repo: RepoRecord,
  pullNumber: number,
  spec: ReviewSpec,
): { review: ReviewRecord; comments: ReviewCommentRecord[] } {
  const id = ctx.state.nextId();
  const review: ReviewRecord = {
    repo: repo.fullName,
    pullNumber,
    id,
    nodeId: nodeId("PRR", id),
    user: spec.user,
    body: spec.body ?? "",
    state: spec.state,
    commitId: spec.commitId,
    submittedAt: timestamp(),
  };
  ctx.state.reviews.push(review);
  const comments = (spec.comments ?? []).map((comment): ReviewCommentRecord => {
    const commentId = ctx.state.nextId();
    return {
      repo: repo.fullName,
      pullNumber,
      id: commentId,
      nodeId: nodeId("PRRC", commentId),
      reviewId: id,
      user: spec.user,
      body: comment.body,
      path: comment.path,
      line: comment.line,
      originalLine: comment.line ?? 1,
      commitId: spec.commitId,
      createdAt: review.submittedAt,
    };
  });
  ctx.state.reviewComments.push(...comments);
  return { review, comments };
}

/** One check run of another App's suite; `log` makes it an Actions job with that log. */
export interface ForeignRunSpec {
  name: string;
  conclusion: string;
  title?: string;
  summary?: string;
  text?: string;
  annotations?: CheckAnnotationRecord[];
  log?: string | Buffer;
  /** Serve the log as the text itself instead of a redirect to a download. */
  logInline?: boolean;
}

/** Another App's completed suite: `app` is its slug (`github-actions` makes its runs Actions jobs). */
export interface SuiteSpec {
  app: string;
  appId?: number;
  headSha: string;
  headBranch: string | null;
  conclusion: string;
  runs: ForeignRunSpec[];
}

/** Records another App's completed check suite with its runs (and job logs). */
export function addCheckSuite(ctx: FakeContext, repo: RepoRecord, spec: SuiteSpec): { suite: CheckSuiteRecord; runs: CheckRunRecord[] } {
  const id = ctx.state.nextId();
  const app = otherAppJson(ctx.urls, spec.app, spec.appId ?? (spec.app === "github-actions" ? 15368 : 9000 + (id % 1000)), spec.app);
  const suite: CheckSuiteRecord = {
    repo: repo.fullName,
    id,
    nodeId: nodeId("CS", id),
    app,
    headSha: spec.headSha,
    headBranch: spec.headBranch,
    status: "completed",
    conclusion: spec.conclusion,
    createdAt: timestamp(),
  };
  ctx.state.checkSuites.push(suite);
  const runs = spec.runs.map((runSpec): CheckRunRecord => {
    const runId = ctx.state.nextId();
    const now = timestamp();
    const run: CheckRunRecord = {
      repo: repo.fullName,
      id: runId,
      nodeId: nodeId("CR", runId),
      name: runSpec.name,
      headSha: spec.headSha,
      status: "completed",
      conclusion: runSpec.conclusion,
      startedAt: now,
      completedAt: now,
      externalId: null,
      // An Actions job's check run id is its job id, and its page is the job's.
      detailsUrl: spec.app === "github-actions" ? `${ctx.urls.web}/${repo.fullName}/actions/runs/${id}/job/${runId}` : `${ctx.urls.web}/ci/${runId}`,
      output: {
        title: runSpec.title ?? null,
        summary: runSpec.summary ?? null,
        text: runSpec.text ?? null,
        annotationsCount: runSpec.annotations?.length ?? 0,
      },
      actions: [],
      history: [],
      suiteId: id,
      app,
      annotations: runSpec.annotations ?? [],
    };
    if (runSpec.log !== undefined) {
      const text = typeof runSpec.log === "string" ? Buffer.from(runSpec.log) : runSpec.log;
      ctx.state.jobLogs.push({ repo: repo.fullName, jobId: runId, text, redirect: runSpec.logInline !== true, key: randomBytes(16).toString("hex") });
    }
    return run;
  });
  ctx.state.checkRuns.push(...runs);
  return { suite, runs };
}
