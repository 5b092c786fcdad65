import { git } from "../../../src/workspace/index.js";
import { fakeOctokit } from "./client.js";
import { checkSuiteCompletedPayload, pullRequestReviewSubmittedPayload, startFakeGitHub, type FakeGitHub } from "./index.js";

const OWNER = "octo-org";
const NAME = "reviewed";
const BRANCH = "harness/story-1";

let gh: FakeGitHub;
let head: string;
let pullNumber: number;

beforeAll(async () => {
  gh = await startFakeGitHub({ validateResponses: true });
  await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# reviewed\n" } });
  const octokit = fakeOctokit(gh, { token: gh.mintToken() });
  const main = (await gh.branchHead(OWNER, NAME, "main")) ?? "";
  const tree = (await octokit.rest.git.createCommit({ owner: OWNER, repo: NAME, message: "start", tree: await treeOf(main), parents: [main] })).data;
  await octokit.rest.git.createRef({ owner: OWNER, repo: NAME, ref: `refs/heads/${BRANCH}`, sha: tree.sha });
  head = tree.sha;
  pullNumber = (await octokit.rest.pulls.create({ owner: OWNER, repo: NAME, head: BRANCH, base: "main", title: "Story", draft: true })).data.number;
});

afterAll(async () => {
  await gh.close();
});

afterEach(() => {
  expect(gh.takeUnexpectedRequests()).toEqual([]);
});

/** The tree of a commit of the bare repository (read with git itself). */
async function treeOf(sha: string): Promise<string> {
  return (await git(["rev-parse", `${sha}^{tree}`], { cwd: gh.state.repo(OWNER, NAME)?.bareDir ?? "", readOnly: true })).trim();
}

describe("fake GitHub: reviews and review comments", () => {
  it("lists a review's inline comments, with path and line, and threads a reply under one", async () => {
    const { review, comments } = gh.submitReview(OWNER, NAME, pullNumber, {
      user: OWNER,
      state: "CHANGES_REQUESTED",
      body: "Please rename.",
      commitId: head,
      comments: [
        { path: "src/a.ts", line: 3, body: "call it greet" },
        { path: "gone.ts", line: null, body: "on a deleted line" },
      ],
    });
    const octokit = fakeOctokit(gh, { token: gh.mintToken() });
    const listed = await octokit.rest.pulls.listCommentsForReview({ owner: OWNER, repo: NAME, pull_number: pullNumber, review_id: review.id });
    expect(listed.data.map((comment) => [comment.path, comment.line, comment.body])).toEqual([
      ["src/a.ts", 3, "call it greet"],
      ["gone.ts", undefined, "on a deleted line"],
    ]);
    const reply = await octokit.rest.pulls.createReplyForReviewComment({
      owner: OWNER,
      repo: NAME,
      pull_number: pullNumber,
      comment_id: comments[0]?.id ?? 0,
      body: "Renamed.",
    });
    expect(reply.status).toBe(201);
    expect(gh.state.reviewCommentsOn(OWNER, NAME, pullNumber).at(-1)).toMatchObject({ inReplyTo: comments[0]?.id, user: gh.botLogin, body: "Renamed." });
    // A reply to a reply is refused, as on GitHub; a missing comment is a 404.
    await expect(
      octokit.rest.pulls.createReplyForReviewComment({ owner: OWNER, repo: NAME, pull_number: pullNumber, comment_id: reply.data.id, body: "again" }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      octokit.rest.pulls.createReplyForReviewComment({ owner: OWNER, repo: NAME, pull_number: pullNumber, comment_id: 99_999_999, body: "x" }),
    ).rejects.toMatchObject({
      status: 404,
    });
    const reviews = await octokit.rest.pulls.listReviews({ owner: OWNER, repo: NAME, pull_number: pullNumber });
    expect(reviews.data.map((listedReview) => listedReview.state)).toContain("CHANGES_REQUESTED");
  });

  it("builds a pull_request_review.submitted payload that carries the body only", async () => {
    const { review } = gh.submitReview(OWNER, NAME, pullNumber, {
      user: OWNER,
      state: "COMMENTED",
      body: "nit",
      commitId: head,
      comments: [{ path: "a", line: 1, body: "x" }],
    });
    const payload = await pullRequestReviewSubmittedPayload(gh, { owner: OWNER, name: NAME, review });
    expect(payload).toMatchObject({
      action: "submitted",
      review: { id: review.id, state: "commented", body: "nit" },
      pull_request: { number: pullNumber, head: { ref: BRANCH } },
    });
    expect(JSON.stringify(payload)).not.toContain('"x"');
  });
});

describe("fake GitHub: other Apps' check suites and Actions job logs", () => {
  it("lists a suite's runs with their output and annotations, and serves a job log by redirect or as text", async () => {
    const { suite, runs } = gh.addCheckSuite(OWNER, NAME, {
      app: "github-actions",
      headSha: head,
      headBranch: BRANCH,
      conclusion: "failure",
      runs: [
        {
          name: "test",
          conclusion: "failure",
          title: "1 failed",
          summary: "greet.test.js failed",
          annotations: [{ path: "greet.test.js", startLine: 4, endLine: 4, level: "failure", title: "assert", message: "expected hello" }],
          log: "line 1\nError: expected hello\n",
        },
        { name: "lint", conclusion: "success", log: "ok\n", logInline: true },
      ],
    });
    const octokit = fakeOctokit(gh, { token: gh.mintToken() });
    const listed = await octokit.rest.checks.listForSuite({ owner: OWNER, repo: NAME, check_suite_id: suite.id });
    expect(listed.data.check_runs.map((run) => [run.name, run.conclusion, run.app?.slug, run.check_suite?.id])).toEqual([
      ["test", "failure", "github-actions", suite.id],
      ["lint", "success", "github-actions", suite.id],
    ]);
    const annotations = await octokit.rest.checks.listAnnotations({ owner: OWNER, repo: NAME, check_run_id: runs[0]?.id ?? 0 });
    expect(annotations.data[0]).toMatchObject({ path: "greet.test.js", start_line: 4, annotation_level: "failure", message: "expected hello" });
    const redirected = await octokit.rest.actions.downloadJobLogsForWorkflowRun({ owner: OWNER, repo: NAME, job_id: runs[0]?.id ?? 0 });
    expect(String(redirected.data)).toContain("Error: expected hello");
    expect(gh.state.requests.some((request) => request.route === "job log download")).toBe(true);
    const inline = await octokit.rest.actions.downloadJobLogsForWorkflowRun({ owner: OWNER, repo: NAME, job_id: runs[1]?.id ?? 0 });
    expect(String(inline.data)).toBe("ok\n");
    await expect(octokit.rest.actions.downloadJobLogsForWorkflowRun({ owner: OWNER, repo: NAME, job_id: 12_345 })).rejects.toMatchObject({ status: 404 });
    const payload = await checkSuiteCompletedPayload(gh, { owner: OWNER, name: NAME, suite });
    expect(payload).toMatchObject({
      check_suite: { id: suite.id, head_sha: head, conclusion: "failure", app: { slug: "github-actions" }, pull_requests: [{ number: pullNumber }] },
      sender: { login: gh.botLogin },
    });
  });

  it("lists a suite on a commit no pull request heads with no pull requests, and 404s an unknown suite", async () => {
    const main = (await gh.branchHead(OWNER, NAME, "main")) ?? "";
    const { suite } = gh.addCheckSuite(OWNER, NAME, {
      app: "other-ci",
      headSha: main,
      headBranch: null,
      conclusion: "failure",
      runs: [{ name: "ci", conclusion: "failure" }],
    });
    const payload = await checkSuiteCompletedPayload(gh, { owner: OWNER, name: NAME, suite });
    expect((payload.check_suite as { pull_requests: unknown[] }).pull_requests).toEqual([]);
    const octokit = fakeOctokit(gh, { token: gh.mintToken() });
    await expect(octokit.rest.checks.listForSuite({ owner: OWNER, repo: NAME, check_suite_id: 1 })).rejects.toMatchObject({ status: 404 });
  });
});
