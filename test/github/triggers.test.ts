import { describe, expect, it } from "@jest/globals";
import { handleIssueComment, handleIssueLabeled, handleRetryAction } from "../../src/github/triggers/index.js";
import { BLOCKED_LABEL } from "../../src/github/index.js";
import { isBotActor } from "../../src/github/triggers/deps.js";
import { checkRunRequestedActionPayload, issuesLabeledPayload } from "../support/fake-github/index.js";
import { contextFor, NAME, openStoryPull, OWNER, useTriggerSetup } from "./fake-setup.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

const gh = useFakeGitHub();
const setup = useTriggerSetup(gh, {
  prefix: "harness-github-queue-",
  permissions: { writer: "write", maintainer: "maintain", reader: "read" },
  now: () => new Date("2026-02-03T04:05:06.000Z"),
});
const requestCount = (): number => gh.state.requests.length;

function labeled(number: number, label = "story", id?: string, sender = "writer") {
  return contextFor("issues.labeled", issuesLabeledPayload(gh, { owner: OWNER, name: NAME, number, label, sender }), setup.octokit, id);
}

describe("issues.labeled", () => {
  it("enqueues a start job; a second label replies; a redelivery does nothing", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Add a greeting", body: "Say hello", user: "writer" });
    const context = labeled(issue.number, "story", "delivery-1");
    const before = requestCount();
    const first = await handleIssueLabeled(context, setup.deps);
    expect(first).toMatchObject({ action: "enqueued" });
    // No API work before enqueueing: the runner asks whether the labeller may and whether the story already completed.
    const routes = gh.state.requests.slice(before).map((request) => `${request.method} ${request.route ?? request.path}`);
    expect(routes.filter((route) => !route.includes("access_tokens"))).toEqual([]);
    if (first.action !== "enqueued") throw new Error("not enqueued");
    expect(first.job).toEqual({
      storyKey: `${OWNER}/${NAME}#${issue.number}`,
      kind: "start",
      installationId: gh.installationId,
      repository: { id: gh.state.repo(OWNER, NAME)?.id, owner: OWNER, name: NAME, cloneUrl: `${gh.url}/${OWNER}/${NAME}.git`, defaultBranch: "main" },
      issue: { number: issue.number, title: "Add a greeting", body: "Say hello", updatedAt: issue.updatedAt },
      requestedBy: "writer",
      deliveryId: "delivery-1",
      eventKey: expect.stringMatching(new RegExp(`^issues\\.labeled/\\d+/${issue.number}/\\d+/${issue.updatedAt}/\\d+$`)),
      enqueuedAt: "2026-02-03T04:05:06.000Z",
    });
    expect(await setup.queue.isActive(first.job.storyKey)).toBe(true);
    expect(setup.commentsOn(issue.number)).toEqual([]);

    // Another label event (another sender; GitHub's updated_at has a resolution of seconds).
    expect(await handleIssueLabeled(labeled(issue.number, "story", "delivery-2", "maintainer"), setup.deps)).toEqual({
      action: "replied",
      reason: "already-active",
    });
    expect(setup.commentsOn(issue.number)).toEqual([`Story #${issue.number} is already queued or running; nothing new was started.`]);
    expect(await handleIssueLabeled(labeled(issue.number, "story", "delivery-1"), setup.deps)).toEqual({ action: "ignored", reason: "duplicate-delivery" });
    expect(setup.commentsOn(issue.number)).toHaveLength(1);
  });

  it("ignores other labels without a request, honours a configured label name", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "t", user: "writer" });
    const context = labeled(issue.number, "bug");
    const before = requestCount();
    expect(await handleIssueLabeled(context, setup.deps)).toEqual({ action: "ignored", reason: "other-label" });
    expect(requestCount()).toBe(before);
    expect(await handleIssueLabeled(labeled(issue.number, "harness-story"), { ...setup.deps, labelName: "harness-story" })).toMatchObject({
      action: "enqueued",
    });
  });

  it("points a blocked story at the retry command", async () => {
    const blocked = gh.createIssue(OWNER, NAME, { title: "b", user: "writer", labels: [BLOCKED_LABEL] });
    expect(await handleIssueLabeled(labeled(blocked.number), setup.deps)).toEqual({ action: "replied", reason: "blocked-use-retry" });
    expect(setup.commentsOn(blocked.number)[0]).toContain("`/harness retry-blocked`");
  });

  it("enqueues a labelled story without any request to GitHub before the answer", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "quiet", user: "writer" });
    const before = requestCount();
    expect(await handleIssueLabeled(labeled(issue.number), setup.deps)).toMatchObject({ action: "enqueued" });
    expect(requestCount()).toBe(before);
  });

  it("defers replies until after the handler returned when the App asks it to", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "busy", user: "writer" });
    const deferred: Array<() => Promise<void>> = [];
    const deferring = { ...setup.deps, defer: (work: () => Promise<void>) => void deferred.push(work) };
    expect(await handleIssueLabeled(labeled(issue.number, "story", "d-a"), deferring)).toMatchObject({ action: "enqueued" });
    const before = requestCount();
    expect(await handleIssueLabeled(labeled(issue.number, "story", "d-b", "maintainer"), deferring)).toEqual({ action: "replied", reason: "already-active" });
    expect(requestCount()).toBe(before);
    expect(deferred).toHaveLength(1);
    await deferred[0]!();
    expect(setup.commentsOn(issue.number)).toHaveLength(1);
  });
});

describe("issue_comment.created", () => {
  it("ignores edited comments, bots, the App itself and commands inside code", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "t", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const edited = setup.commented(issue.number, "/harness retry-blocked");
    (edited.payload as { action: string }).action = "edited";
    gh.addBotAccount("dependabot[bot]");
    const bot = setup.commented(issue.number, "/harness retry-blocked", "dependabot[bot]");
    expect(bot.payload.comment.user?.type).toBe("Bot");
    const self = setup.commented(issue.number, "/harness retry-blocked", gh.botLogin);
    const viaApp = setup.commented(issue.number, "/harness retry-blocked");
    (viaApp.payload.comment as { performed_via_github_app: unknown }).performed_via_github_app = gh.appJson();
    const fenced = setup.commented(issue.number, "```\n/harness retry-blocked\n```\n> /harness retry-blocked");
    const before = requestCount();
    expect(await handleIssueComment(edited, setup.deps)).toEqual({ action: "ignored", reason: "not-created" });
    for (const context of [bot, self, viaApp]) expect(await handleIssueComment(context, setup.deps)).toEqual({ action: "ignored", reason: "bot" });
    expect(await handleIssueComment(fenced, setup.deps)).toEqual({ action: "ignored", reason: "no-command" });
    expect(requestCount()).toBe(before);
  });

  it("refuses a reader before any other work, and enqueues nothing", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "t", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const before = requestCount();
    expect(await handleIssueComment(setup.commented(issue.number, "/harness retry-blocked", "reader"), setup.deps)).toEqual({
      action: "replied",
      reason: "not-permitted",
    });
    expect(await handleIssueComment(setup.commented(issue.number, "/harness retry-blocked", "stranger"), setup.deps)).toEqual({
      action: "replied",
      reason: "not-permitted",
    });
    const routes = gh.state.requests.slice(before).map((request) => `${request.method} ${request.route ?? request.path}`);
    expect(routes.filter((route) => !route.includes("/comments") || route.startsWith("GET"))).toEqual([
      "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
      "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
    ]);
    expect(setup.commentsOn(issue.number).at(-1)).toBe(
      "@stranger only people with write, maintain or admin permission on this repository can run story-harness commands.",
    );
    expect(await setup.queue.isActive(`${OWNER}/${NAME}#${issue.number}`)).toBe(false);
  });

  it("answers help and unknown commands with the command list", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "t", user: "writer" });
    expect(await handleIssueComment(setup.commented(issue.number, "Hi\n/harness help"), setup.deps)).toEqual({ action: "replied", reason: "help" });
    expect(await handleIssueComment(setup.commented(issue.number, "/harness deploy"), setup.deps)).toEqual({ action: "replied", reason: "unknown-command" });
    const replies = setup.commentsOn(issue.number).filter((body) => !body.startsWith("Hi") && !body.startsWith("/harness"));
    expect(replies[0]).toContain("- `/harness retry-blocked`:");
    expect(replies[1]).toMatch(/^Unknown command `\/harness deploy`\.\n\nstory-harness commands/);
  });

  it("re-admits a blocked story from its pull request; says why when not blocked or not a story", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Blocked story", body: "b", user: "writer", labels: ["story"] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);
    expect(await handleIssueComment(setup.commented(pull.number, "/harness retry-blocked"), setup.deps)).toEqual({ action: "replied", reason: "not-blocked" });
    expect(setup.commentsOn(pull.number).at(-1)).toBe(
      `Story #${issue.number} is not blocked (no \`harness:blocked\` label), so \`/harness retry-blocked\` does nothing.`,
    );

    gh.addLabel(OWNER, NAME, issue.number, BLOCKED_LABEL);
    const outcome = await handleIssueComment(setup.commented(pull.number, "  /harness retry-blocked\n/harness retry-blocked", "maintainer"), setup.deps);
    expect(outcome).toMatchObject({
      action: "enqueued",
      job: { kind: "retry-blocked", pullNumber: pull.number, requestedBy: "maintainer", issue: { number: issue.number, title: "Blocked story" } },
    });
    expect(setup.commentsOn(pull.number).at(-1)).toBe(`Re-admitting story #${issue.number} in a fresh worktree.`);
    expect(await handleIssueComment(setup.commented(issue.number, "/harness retry-blocked"), setup.deps)).toEqual({
      action: "replied",
      reason: "already-active",
    });

    const plain = gh.createIssue(OWNER, NAME, { title: "not a story", user: "writer" });
    expect(await handleIssueComment(setup.commented(plain.number, "/harness retry-blocked"), setup.deps)).toEqual({ action: "replied", reason: "not-a-story" });
  });

  it("re-admits from the story issue itself", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "On the issue", user: "writer", labels: ["story", BLOCKED_LABEL] });
    await openStoryPull(gh, setup.octokit, issue.number);
    // The runner finds the story's pull request by its branch; the handler does not look it up.
    const outcome = await handleIssueComment(setup.commented(issue.number, "/harness retry-blocked"), setup.deps);
    expect(outcome).toMatchObject({ action: "enqueued", job: { kind: "retry-blocked" } });
    if (outcome.action === "enqueued") expect(outcome.job.pullNumber).toBeUndefined();
  });
});

describe("check_run.requested_action", () => {
  it("re-admits on Retry from a writer and refuses a reader", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Retry me", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);
    const run = await setup.octokit.rest.checks.create({
      owner: OWNER,
      repo: NAME,
      name: "harness / story",
      head_sha: pull.headSha,
      external_id: `story-${issue.number}`,
      status: "completed",
      conclusion: "action_required",
    });
    const press = async (sender: string, identifier = "retry") =>
      contextFor(
        "check_run.requested_action",
        await checkRunRequestedActionPayload(gh, { owner: OWNER, name: NAME, checkRunId: run.data.id, identifier, sender }),
        setup.octokit,
      );
    expect(await handleRetryAction(await press("writer", "other"), setup.deps)).toEqual({ action: "ignored", reason: "other-action" });
    expect(await handleRetryAction(await press("reader"), setup.deps)).toEqual({ action: "replied", reason: "not-permitted" });
    expect(setup.commentsOn(pull.number).at(-1)).toMatch(/^@reader only people with write/);
    expect(await handleRetryAction(await press("writer"), setup.deps)).toMatchObject({
      action: "enqueued",
      job: { kind: "retry-blocked", pullNumber: pull.number, requestedBy: "writer", issue: { number: issue.number } },
    });
    expect(setup.commentsOn(pull.number).at(-1)).toBe(`Re-admitting story #${issue.number} in a fresh worktree.`);
  });

  // Each of these would be enqueued without its guard: the sender may write, the story is blocked.
  it("ignores Retry pressed by a bot, by the App itself, or on another App's check run", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Not for bots", user: "writer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);
    const run = await setup.octokit.rest.checks.create({
      owner: OWNER,
      repo: NAME,
      name: "harness / story",
      head_sha: pull.headSha,
      external_id: `story-${issue.number}`,
      status: "completed",
      conclusion: "action_required",
    });
    gh.addBotAccount("helper[bot]");
    gh.setPermission(OWNER, NAME, "helper[bot]", "write");
    const press = async (sender: string) =>
      contextFor(
        "check_run.requested_action",
        await checkRunRequestedActionPayload(gh, { owner: OWNER, name: NAME, checkRunId: run.data.id, identifier: "retry", sender }),
        setup.octokit,
      );

    const bot = await press("helper[bot]");
    expect(bot.payload.sender.type).toBe("Bot");
    expect(await handleRetryAction(bot, setup.deps)).toEqual({ action: "ignored", reason: "bot" });
    expect(await handleRetryAction(await press(gh.botLogin), setup.deps)).toEqual({ action: "ignored", reason: "bot" });
    const otherApp = await press("writer");
    otherApp.payload.check_run.app = { ...otherApp.payload.check_run.app!, id: gh.appId + 1, slug: "other-app" };
    expect(await handleRetryAction(otherApp, setup.deps)).toEqual({ action: "ignored", reason: "other-app" });
    expect(setup.commentsOn(pull.number)).toEqual([]);
    expect(await setup.queue.isActive(`${OWNER}/${NAME}#${issue.number}`)).toBe(false);
    // The fixture is live: the same press by a writer on the App's own check run re-admits.
    expect(await handleRetryAction(await press("writer"), setup.deps)).toMatchObject({ action: "enqueued" });
  });
});

describe("isBotActor", () => {
  // GitHub types its bot accounts; the login check stays for actors that carry no type (the
  // App's login is the one thing the harness knows about itself without asking).
  it("knows the App by its login even when the actor carries no type, and a bot by its type", () => {
    expect(isBotActor({ login: gh.botLogin }, setup.deps)).toBe(true);
    expect(isBotActor({ login: gh.botLogin, type: "User" }, setup.deps)).toBe(true);
    expect(isBotActor({ login: "helper[bot]", type: "Bot" }, setup.deps)).toBe(true);
    expect(isBotActor({ login: "writer", type: "User" }, setup.deps)).toBe(false);
    expect(isBotActor({ login: "writer" }, setup.deps)).toBe(false);
    // Another App's login is still a bot by its `[bot]` suffix (bots never start stories unless allowlisted).
    expect(isBotActor({ login: gh.botLogin }, { ...setup.deps, appSlug: "someone-else" })).toBe(true);
    expect(isBotActor({ login: "writer" }, { ...setup.deps, appSlug: "someone-else" })).toBe(false);
    expect(isBotActor(null, setup.deps)).toBe(true);
  });
});
