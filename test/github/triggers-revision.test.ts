/**
 * The triggers after the pull request: a writer's review, `/harness revise`, and another App's
 * failing check suite on the story's head queue a `revise` job with the feedback frozen in it;
 * readers, bots, the App's own suites, stale heads and pull requests that are not a story's start nothing.
 */
import { beforeAll, describe, expect, it } from "@jest/globals";
import { handleCheckSuite, handleIssueComment, handlePullRequestReview, CI_LOG_TAIL_BYTES } from "../../src/github/triggers/index.js";
import { checkSuiteCompletedPayload, issueCommentCreatedPayload, pullRequestReviewSubmittedPayload } from "../support/fake-github/index.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { contextFor, NAME, openStoryPull, OWNER, pushStoryBranch, useTriggerSetup } from "./fake-setup.js";

const gh = useFakeGitHub();
const setup = useTriggerSetup(gh, { prefix: "harness-revision-triggers-", permissions: { writer: "write", reader: "read" }, bots: ["helper[bot]"] });
let story: { number: number; headSha: string };
let storyIssue: number;

beforeAll(async () => {
  storyIssue = gh.createIssue(OWNER, NAME, { title: "Greet", body: "Add greet()", user: OWNER, labels: ["story"] }).number;
  story = await openStoryPull(gh, setup.octokit, storyIssue);
});

async function reviewed(
  user: string,
  state: "CHANGES_REQUESTED" | "COMMENTED" | "APPROVED",
  comments: { path: string; line: number | null; body: string }[] = [],
  pull = story.number,
) {
  const { review } = gh.submitReview(OWNER, NAME, pull, { user, state, body: "Please change this.", commitId: story.headSha, comments });
  return contextFor("pull_request_review.submitted", await pullRequestReviewSubmittedPayload(gh, { owner: OWNER, name: NAME, review }), setup.octokit);
}

describe("pull_request_review.submitted", () => {
  it("queues a revise job with the review's body and every inline comment (path, line, body) read through the API", async () => {
    const outcome = await handlePullRequestReview(
      await reviewed("writer", "CHANGES_REQUESTED", [
        { path: "greet.js", line: 2, body: "say hello" },
        { path: "old.js", line: null, body: "on a line deleted since" },
      ]),
      setup.deps,
    );
    expect(outcome.action).toBe("enqueued");
    if (outcome.action !== "enqueued") return;
    expect(outcome.job).toMatchObject({ kind: "revise", pullNumber: story.number, requestedBy: "writer", issue: { number: storyIssue, title: "Greet" } });
    expect(outcome.job.revision?.triggers).toEqual([
      {
        kind: "review",
        by: "writer",
        id: expect.any(Number),
        body: "Please change this.",
        comments: [
          { id: expect.any(Number), path: "greet.js", line: 2, body: "say hello" },
          { id: expect.any(Number), path: "old.js", body: "on a line deleted since" },
        ],
      },
    ]);
  });

  it("starts nothing for a reader's review, a bot's, an approval, or a comment review without inline comments", async () => {
    expect(await handlePullRequestReview(await reviewed("reader", "CHANGES_REQUESTED"), setup.deps)).toEqual({ action: "ignored", reason: "not-permitted" });
    expect(await handlePullRequestReview(await reviewed("helper[bot]", "CHANGES_REQUESTED"), setup.deps)).toEqual({ action: "ignored", reason: "bot" });
    expect(await handlePullRequestReview(await reviewed(gh.botLogin, "CHANGES_REQUESTED"), setup.deps)).toEqual({ action: "ignored", reason: "bot" });
    expect(await handlePullRequestReview(await reviewed("writer", "APPROVED"), setup.deps)).toEqual({ action: "ignored", reason: "review-asks-nothing" });
    expect(await handlePullRequestReview(await reviewed("writer", "COMMENTED"), setup.deps)).toEqual({ action: "ignored", reason: "review-asks-nothing" });
    expect(await setup.queue.snapshot()).toEqual([]);
  });

  it("starts nothing for a review on a pull request that is not a story's, nor on a story's closed one", async () => {
    const ahead = await pushStoryBranch(gh, 999);
    await setup.octokit.rest.git.createRef({ owner: OWNER, repo: NAME, ref: "refs/heads/feature", sha: ahead });
    const { data: plain } = await setup.octokit.rest.pulls.create({ owner: OWNER, repo: NAME, head: "feature", base: "main", title: "A feature" });
    expect(await handlePullRequestReview(await reviewed("writer", "CHANGES_REQUESTED", [], plain.number), setup.deps)).toEqual({
      action: "ignored",
      reason: "not-a-story",
    });
    const { data: closed } = await setup.octokit.rest.pulls.create({ owner: OWNER, repo: NAME, head: "harness/story-999", base: "main", title: "Story 999" });
    await setup.octokit.rest.pulls.update({ owner: OWNER, repo: NAME, pull_number: closed.number, state: "closed" });
    expect(await handlePullRequestReview(await reviewed("writer", "CHANGES_REQUESTED", [], closed.number), setup.deps)).toEqual({
      action: "ignored",
      reason: "pull-request-closed",
    });
    expect(await setup.queue.snapshot()).toEqual([]);
  });

  it("batches a second trigger while the story's run is queued into its next round, instead of queueing two runs, and says so", async () => {
    expect((await handlePullRequestReview(await reviewed("writer", "CHANGES_REQUESTED"), setup.deps)).action).toBe("enqueued");
    const second = await handlePullRequestReview(await reviewed("writer", "CHANGES_REQUESTED"), setup.deps);
    expect(second).toMatchObject({ action: "enqueued", jobId: expect.stringMatching(/^pending:/) });
    expect(gh.state.commentsOn(OWNER, NAME, story.number).at(-1)?.body).toMatch(/batched into its next revision round/);
  });
});

describe("/harness revise", () => {
  it("queues a revise job with the writer's text; a reader gets the usual refusal", async () => {
    const comment = gh.addComment(OWNER, NAME, story.number, { body: "/harness revise rename greet to hello\nand keep the tests", user: "writer" });
    const outcome = await handleIssueComment(
      contextFor("issue_comment.created", issueCommentCreatedPayload(gh, { owner: OWNER, name: NAME, comment }), setup.octokit),
      setup.deps,
    );
    expect(outcome.action).toBe("enqueued");
    if (outcome.action === "enqueued") {
      expect(outcome.job.revision?.triggers).toEqual([
        { kind: "command", by: "writer", id: comment.id, body: "rename greet to hello\nand keep the tests", comments: [] },
      ]);
    }
    const byReader = gh.addComment(OWNER, NAME, story.number, { body: "/harness revise do it", user: "reader" });
    const refused = await handleIssueComment(
      contextFor("issue_comment.created", issueCommentCreatedPayload(gh, { owner: OWNER, name: NAME, comment: byReader }), setup.octokit),
      setup.deps,
    );
    expect(refused).toEqual({ action: "replied", reason: "not-permitted" });
  });

  it("asks for instructions when the command has none", async () => {
    const comment = gh.addComment(OWNER, NAME, story.number, { body: "/harness revise", user: "writer" });
    expect(
      (
        await handleIssueComment(
          contextFor("issue_comment.created", issueCommentCreatedPayload(gh, { owner: OWNER, name: NAME, comment }), setup.octokit),
          setup.deps,
        )
      ).action,
    ).toBe("replied");
    expect(gh.state.commentsOn(OWNER, NAME, story.number).at(-1)?.body).toMatch(/needs instructions/);
  });
});

describe("check_suite.completed", () => {
  const secret = "ghp_" + "A".repeat(36);

  async function suiteOn(headSha: string, app: string, log?: string, conclusion = "failure", sender?: string) {
    const { suite } = gh.addCheckSuite(OWNER, NAME, {
      app,
      headSha,
      headBranch: `harness/story-${storyIssue}`,
      conclusion,
      runs: [
        {
          name: "test",
          conclusion,
          summary: "1 test failed",
          annotations: [{ path: "greet.test.js", startLine: 3, endLine: 3, level: "failure", title: null, message: "expected hello" }],
          ...(log !== undefined ? { log } : {}),
        },
        { name: "lint", conclusion: "success" },
      ],
    });
    return contextFor(
      "check_suite.completed",
      await checkSuiteCompletedPayload(gh, { owner: OWNER, name: NAME, suite, ...(sender ? { sender } : {}) }),
      setup.octokit,
    );
  }

  it("queues a fix round for an Actions failure on the head, with output, annotations and the log's tail: redacted, ANSI stripped, 64 KiB", async () => {
    const noise = "x".repeat(1023) + "\n";
    const log = noise.repeat(10 * 1024) + `\u001b[31mError: expected hello, got hi\u001b[0m token=${secret}\n`;
    const outcome = await handleCheckSuite(await suiteOn(story.headSha, "github-actions", log), setup.deps);
    expect(outcome.action).toBe("enqueued");
    if (outcome.action !== "enqueued") return;
    const trigger = outcome.job.revision?.triggers[0];
    expect(trigger).toMatchObject({ kind: "ci", app: "github-actions", headSha: story.headSha });
    if (trigger?.kind !== "ci") return;
    expect(trigger.checks).toHaveLength(1);
    const [check] = trigger.checks;
    expect(check).toMatchObject({ name: "test", conclusion: "failure", annotations: ["greet.test.js:3: expected hello"] });
    expect(check?.summary).toContain("1 test failed");
    expect(check?.log).toContain("Error: expected hello, got hi");
    expect(check?.log).not.toContain("\u001b[");
    expect(check?.log).not.toContain(secret);
    expect(Buffer.byteLength(check?.log ?? "")).toBeLessThanOrEqual(CI_LOG_TAIL_BYTES);
    // The sender was the App's own bot (it pushed the head): the rule is the suite's App, not the sender.
    expect(outcome.job.requestedBy).toBe("github-actions[bot]");
  });

  it("ignores the App's own suite, a passing suite, a suite on an older head, and a suite with no pull request", async () => {
    const own = await suiteOn(story.headSha, gh.appSlug);
    (own.payload.check_suite as { app: { id: number } }).app.id = gh.appId;
    expect(await handleCheckSuite(own, setup.deps)).toEqual({ action: "ignored", reason: "own-suite" });
    expect(await handleCheckSuite(await suiteOn(story.headSha, "other-ci", undefined, "success"), setup.deps)).toEqual({
      action: "ignored",
      reason: "not-failing",
    });
    const stale = await suiteOn(story.headSha, "other-ci");
    const newer = await pushStoryBranch(gh, storyIssue, "a newer commit");
    expect(await handleCheckSuite(stale, setup.deps)).toEqual({ action: "ignored", reason: "stale-head" });
    story.headSha = newer;
    const main = (await gh.branchHead(OWNER, NAME, "main")) ?? "";
    expect(await handleCheckSuite(await suiteOn(main, "other-ci"), setup.deps)).toEqual({ action: "ignored", reason: "no-story-pull-request" });
    expect(await setup.queue.snapshot()).toEqual([]);
  });
});
