/**
 * The triggers' refusals and fallbacks that the main trigger tests do not reach, each found by
 * mutation testing (`npm run mutate`): events without an installation, a pull request
 * labelled like a story, Retry on another check run, an App id the operator did not give, a
 * check run without its external id or its pull request, a fork's branch named like a story's,
 * a replayed press, an allowlisted bot commenting through its App, and the replies' words.
 */
import { describe, expect, it } from "@jest/globals";
import { handleIssueComment, handleIssueLabeled, handleRetryAction } from "../../src/github/triggers/index.js";
import { BLOCKED_LABEL } from "../../src/github/index.js";
import { git } from "../../src/workspace/index.js";
import { checkRunRequestedActionPayload, issuesLabeledPayload } from "../support/fake-github/index.js";
import { contextFor, NAME, openStoryPull, OWNER, pushStoryBranch, RecordingLog, useTriggerSetup } from "./fake-setup.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

const gh = useFakeGitHub();
const setup = useTriggerSetup(gh, {
  prefix: "harness-github-queue-",
  permissions: { writer: "write", "helper[bot]": "write" },
  bots: ["helper[bot]"],
  now: () => new Date("2026-02-03T04:05:06.000Z"),
});

async function storyCheckRun(issue: number, headSha: string, options: { name?: string; externalId?: boolean } = {}) {
  const { data } = await setup.octokit.rest.checks.create({
    owner: OWNER,
    repo: NAME,
    name: options.name ?? "harness / story",
    head_sha: headSha,
    ...(options.externalId === false ? {} : { external_id: `story-${issue}` }),
    status: "completed",
    conclusion: "action_required",
  });
  return data.id;
}

async function press(checkRunId: number, sender = "writer", id?: string) {
  return contextFor(
    "check_run.requested_action",
    await checkRunRequestedActionPayload(gh, { owner: OWNER, name: NAME, checkRunId, identifier: "retry", sender }),
    setup.octokit,
    id,
  );
}

describe("events the App cannot act on", () => {
  it("ignores a label, a comment and a Retry press that come without an installation, and asks GitHub nothing", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "t", user: "writer", labels: [BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);
    const run = await storyCheckRun(issue.number, pull.headSha);
    const label = contextFor(
      "issues.labeled",
      issuesLabeledPayload(gh, {
        owner: OWNER,
        name: NAME,
        number: gh.createIssue(OWNER, NAME, { title: "u", user: "writer" }).number,
        label: "story",
        sender: "writer",
      }),
      setup.octokit,
    );
    const comment = setup.commented(issue.number, "/harness retry-blocked");
    const retry = await press(run);
    for (const context of [label, comment, retry]) delete (context.payload as { installation?: unknown }).installation;
    const before = gh.state.requests.length;
    expect(await handleIssueLabeled(label, setup.deps)).toEqual({ action: "ignored", reason: "no-installation" });
    expect(await handleIssueComment(comment, setup.deps)).toEqual({ action: "ignored", reason: "no-installation" });
    expect(await handleRetryAction(retry, setup.deps)).toEqual({ action: "ignored", reason: "no-installation" });
    expect(gh.state.requests.length).toBe(before);
  });

  it("ignores the story label on a pull request, and a label event without a label", async () => {
    const pull = await openStoryPull(gh, setup.octokit, gh.createIssue(OWNER, NAME, { title: "p", user: "writer" }).number);
    const context = contextFor(
      "issues.labeled",
      issuesLabeledPayload(gh, { owner: OWNER, name: NAME, number: pull.number, label: "story", sender: "writer" }),
      setup.octokit,
    );
    (context.payload.issue as { pull_request?: unknown }).pull_request = { url: `${gh.apiUrl}/repos/${OWNER}/${NAME}/pulls/${pull.number}` };
    expect(await handleIssueLabeled(context, setup.deps)).toEqual({ action: "ignored", reason: "pull-request" });
    const unlabelled = contextFor(
      "issues.labeled",
      issuesLabeledPayload(gh, {
        owner: OWNER,
        name: NAME,
        number: gh.createIssue(OWNER, NAME, { title: "q", user: "writer" }).number,
        label: "story",
        sender: "writer",
      }),
      setup.octokit,
    );
    delete (unlabelled.payload as { label?: unknown }).label;
    expect(await handleIssueLabeled(unlabelled, setup.deps)).toEqual({ action: "ignored", reason: "other-label" });
  });
});

describe("issue_comment.created", () => {
  it("answers each different unknown command once, naming it", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "t", user: "writer" });
    expect(await handleIssueComment(setup.commented(issue.number, "/harness deploy\n/harness rollback\n/harness deploy"), setup.deps)).toEqual({
      action: "replied",
      reason: "unknown-command",
    });
    const replies = setup.commentsOn(issue.number).filter((body) => body.startsWith("Unknown command"));
    expect(replies.map((body) => body.split(".")[0])).toEqual(["Unknown command `/harness deploy`", "Unknown command `/harness rollback`"]);
  });

  it("acts on an allowlisted bot commenting through its own App", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "t", user: "writer" });
    const context = setup.commented(issue.number, "/harness help", "helper[bot]");
    (context.payload.comment as { performed_via_github_app: unknown }).performed_via_github_app = { ...gh.appJson(), id: gh.appId + 7, slug: "helper" };
    expect(await handleIssueComment(context, { ...setup.deps, allowedBots: ["helper[bot]"] })).toEqual({ action: "replied", reason: "help" });
  });

  it("says why retry-blocked does nothing on an issue that is not a story, and on a pull request not opened by the harness", async () => {
    const plain = gh.createIssue(OWNER, NAME, { title: "not a story", user: "writer" });
    expect(await handleIssueComment(setup.commented(plain.number, "/harness retry-blocked"), setup.deps)).toEqual({ action: "replied", reason: "not-a-story" });
    expect(setup.commentsOn(plain.number).at(-1)).toBe("This issue is not a story (it has no `story` label), so `/harness retry-blocked` does nothing.");

    // A branch of its own name, with a commit on top of main.
    const commit = await pushStoryBranch(gh, 999);
    await git(["update-ref", "refs/heads/feature", commit], { cwd: gh.state.repo(OWNER, NAME)?.bareDir ?? "" });
    const { data: pull } = await setup.octokit.rest.pulls.create({ owner: OWNER, repo: NAME, head: "feature", base: "main", title: "A feature" });
    expect(await handleIssueComment(setup.commented(pull.number, "/harness retry-blocked"), setup.deps)).toEqual({ action: "replied", reason: "not-a-story" });
    expect(setup.commentsOn(pull.number).at(-1)).toMatch(/^This pull request was not opened by story-harness/);
  });

  it("does not take a pull request whose head is in another repository (a fork) for a story's, whatever its branch is called", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Blocked story", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);
    const context = setup.commented(pull.number, "/harness retry-blocked");
    // Seen from the event's repository, the pull request's head repository is another one.
    (context.payload.repository as { id: number }).id += 1000;
    expect(await handleIssueComment(context, setup.deps)).toEqual({ action: "replied", reason: "not-a-story" });
    expect(await setup.queue.isActive(`${OWNER}/${NAME}#${issue.number}`)).toBe(false);
  });

  it("says a story that is not blocked but queued is already queued or running", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Busy", user: "writer" });
    const label = contextFor(
      "issues.labeled",
      issuesLabeledPayload(gh, { owner: OWNER, name: NAME, number: issue.number, label: "story", sender: "writer" }),
      setup.octokit,
    );
    expect(await handleIssueLabeled(label, setup.deps)).toMatchObject({ action: "enqueued" });
    expect(await handleIssueComment(setup.commented(issue.number, "/harness retry-blocked"), setup.deps)).toEqual({
      action: "replied",
      reason: "already-active",
    });
    expect(setup.commentsOn(issue.number).at(-1)).toBe(`Story #${issue.number} is queued or running, so \`/harness retry-blocked\` does nothing.`);
  });

  it("freezes a story without a body as an empty body", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "No body", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const context = setup.commented(issue.number, "/harness retry-blocked");
    (context.payload.issue as { body: string | null }).body = null;
    const outcome = await handleIssueComment(context, setup.deps);
    expect(outcome).toMatchObject({ action: "enqueued", job: { issue: { body: "" } } });
  });

  it("keeps the re-admission when its acknowledgement cannot be posted, and logs why", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Quiet", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const context = setup.commented(issue.number, "/harness retry-blocked");
    const window = gh.injectFailure({ method: "POST", path: /\/issues\/\d+\/comments$/, failure: { kind: "bad-gateway" } });
    try {
      expect(await handleIssueComment(context, setup.deps)).toMatchObject({ action: "enqueued" });
    } finally {
      window.close();
    }
    expect(await setup.queue.isActive(`${OWNER}/${NAME}#${issue.number}`)).toBe(true);
    const warning = (setup.deps.log as RecordingLog).lines.find((line) => line.level === "warn");
    expect(warning).toMatchObject({ message: "could not acknowledge the re-admission", details: { storyKey: `${OWNER}/${NAME}#${issue.number}` } });
    expect(JSON.stringify(warning?.details)).toContain("502");
  });
});

describe("check_run.requested_action", () => {
  it("ignores Retry on a check run other than the story's, and a press without an action", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Other run", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);
    expect(await handleRetryAction(await press(await storyCheckRun(issue.number, pull.headSha, { name: "lint" })), setup.deps)).toEqual({
      action: "ignored",
      reason: "other-check-run",
    });
    const bare = await press(await storyCheckRun(issue.number, pull.headSha));
    delete (bare.payload as { requested_action?: unknown }).requested_action;
    expect(await handleRetryAction(bare, setup.deps)).toEqual({ action: "ignored", reason: "other-action" });
    const appless = await press(await storyCheckRun(issue.number, pull.headSha));
    (appless.payload.check_run as { app: unknown }).app = null;
    expect(await handleRetryAction(appless, setup.deps)).toEqual({ action: "ignored", reason: "other-app" });
    expect(setup.commentsOn(pull.number)).toEqual([]);
  });

  it("re-admits when the App's id is not configured (no check-run owner to compare)", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "No app id", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);
    const { appId: _appId, ...withoutAppId } = setup.deps;
    expect(await handleRetryAction(await press(await storyCheckRun(issue.number, pull.headSha)), withoutAppId)).toMatchObject({ action: "enqueued" });
  });

  it("finds the story by its branch when the check run has no external id, and by the external id whatever the branch", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "By branch", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);
    expect(await handleRetryAction(await press(await storyCheckRun(issue.number, pull.headSha, { externalId: false })), setup.deps)).toMatchObject({
      action: "enqueued",
      job: { issue: { number: issue.number }, pullNumber: pull.number },
    });

    const other = gh.createIssue(OWNER, NAME, { title: "By external id", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const context = await press(await storyCheckRun(other.number, pull.headSha));
    expect(await handleRetryAction(context, setup.deps)).toMatchObject({ action: "enqueued", job: { issue: { number: other.number } } });
  });

  it("ignores a run that names no story, and replies on the story issue when the run has no pull request", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "No pull", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const sha = await pushStoryBranch(gh, issue.number);
    // No open pull request has this head: the payload lists none, and no head branch.
    const nameless = await press(await storyCheckRun(issue.number, sha, { externalId: false }));
    expect(await handleRetryAction(nameless, setup.deps)).toEqual({ action: "ignored", reason: "not-a-story" });
    const suiteless = await press(await storyCheckRun(issue.number, sha, { externalId: false }));
    delete (suiteless.payload.check_run as { check_suite?: unknown }).check_suite;
    expect(await handleRetryAction(suiteless, setup.deps)).toEqual({ action: "ignored", reason: "not-a-story" });

    expect(await handleRetryAction(await press(await storyCheckRun(issue.number, sha)), setup.deps)).toMatchObject({
      action: "enqueued",
      job: { issue: { number: issue.number } },
    });
    expect(setup.commentsOn(issue.number).at(-1)).toBe(`Re-admitting story #${issue.number} in a fresh worktree.`);
  });

  it("starts nothing twice for one press replayed under a new delivery id", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Replayed", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);
    const run = await storyCheckRun(issue.number, pull.headSha);
    expect(await handleRetryAction(await press(run, "writer", "delivery-a"), setup.deps)).toMatchObject({ action: "enqueued" });
    const replies = setup.commentsOn(pull.number).length;
    expect(await handleRetryAction(await press(run, "writer", "delivery-b"), setup.deps)).toEqual({ action: "ignored", reason: "duplicate-delivery" });
    expect(setup.commentsOn(pull.number)).toHaveLength(replies);
  });
});
