import { beforeAll, describe, expect, it } from "@jest/globals";
import { BLOCKED_LABEL } from "../../src/github/index.js";
import { GitHubReporter, STATUS_MARKER } from "../../src/github/report/index.js";
import { emptySnapshot, reduceSnapshot, type HistoryEvent, type StorySnapshot } from "../../src/pipeline/events.js";
import { fakeOctokit } from "../support/fake-github/client.js";
import { type CheckRunRecord } from "../support/fake-github/index.js";
import { NAME, openStoryPull, OWNER, pushStoryBranch, RecordingLog } from "./fake-setup.js";
import { completedStory, gate, provisionBlockedStory, retryingStory, stageStarted, started, verdict, cleanClone } from "./story-events.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

const gh = useFakeGitHub();
let octokit: ReturnType<typeof fakeOctokit>;

beforeAll(async () => {
  await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# demo\n" } });
  octokit = fakeOctokit(gh, { installation: true });
});

interface Story {
  issue: number;
  pull: number;
  headSha: string;
  log: RecordingLog;
  reporter: GitHubReporter;
  snapshot: StorySnapshot;
}

async function newStory(secrets: readonly string[] = []): Promise<Story> {
  const issue = gh.createIssue(OWNER, NAME, { title: "Add a greeting", user: "writer", labels: ["story"] });
  const pull = await openStoryPull(gh, octokit, issue.number);
  const log = new RecordingLog();
  const reporter = new GitHubReporter({
    octokit,
    owner: OWNER,
    repo: NAME,
    pullNumber: pull.number,
    issueNumber: issue.number,
    headSha: pull.headSha,
    log,
    secrets,
    botLogin: gh.botLogin,
  });
  return { issue: issue.number, pull: pull.number, headSha: pull.headSha, log, reporter, snapshot: emptySnapshot() };
}

/** Feeds events to the reporter one by one, as the coordinator does. */
async function feed(story: Story, events: readonly HistoryEvent[], reporter = story.reporter): Promise<void> {
  for (const event of events) {
    story.snapshot = reduceSnapshot(story.snapshot, event);
    await reporter.onEvent(event, story.snapshot);
  }
}

const runsOf = (story: Story, name: string, headSha = story.headSha): CheckRunRecord[] =>
  gh.state.checkRuns.filter((run) => run.name === name && run.headSha === headSha && run.externalId === `story-${story.issue}`);
const only = (story: Story, name: string, headSha?: string): CheckRunRecord => {
  const runs = runsOf(story, name, headSha);
  expect(runs).toHaveLength(1);
  return runs[0]!;
};
const statusComments = (story: Story) => gh.state.comments.filter((comment) => comment.issueNumber === story.pull && comment.body.startsWith(STATUS_MARKER));
const labelsOf = (number: number): string[] => gh.state.issue(gh.state.repo(OWNER, NAME)!, number)?.labels ?? [];

describe("GitHubReporter", () => {
  it("reports a provisioning failure: failed provision check, blocked story with a Retry button, labels, one comment", async () => {
    const story = await newStory();
    await feed(story, provisionBlockedStory("npm ERR! 404 left-pad"));
    const provision = only(story, "harness / provision");
    expect(provision).toMatchObject({ status: "completed", conclusion: "failure", output: { title: "Provisioning failed: workspace-provision-failed" } });
    expect(provision.output.summary).toContain("**Exit code:** 1");
    expect(provision.output.summary).toContain("npm ERR! 404 left-pad");
    expect(provision.history.map((body) => body.status)).toEqual(["queued", "in_progress", "completed"]);
    const storyRun = only(story, "harness / story");
    expect(storyRun).toMatchObject({
      status: "completed",
      conclusion: "action_required",
      actions: [{ label: "Retry", description: "Re-admit this story", identifier: "retry" }],
    });
    expect(storyRun.history[0]).toMatchObject({ status: "in_progress" });
    expect(only(story, "harness / clean-clone")).toMatchObject({ status: "completed", conclusion: "skipped" });
    expect(labelsOf(story.issue)).toContain(BLOCKED_LABEL);
    expect(labelsOf(story.pull)).toContain(BLOCKED_LABEL);
    expect(gh.state.labels.find((label) => label.name === BLOCKED_LABEL)).toMatchObject({ color: "b60205" });
    const comments = statusComments(story);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("`/harness retry-blocked`");
    expect(comments[0]!.history.length).toBeGreaterThan(1); // edited in place as the story moved
  });

  it("labels a blocked story before it shows the Retry button or the comment offering a re-admission", async () => {
    const story = await newStory();
    const from = gh.state.requests.length;
    await feed(story, provisionBlockedStory());
    const requests = gh.state.requests.slice(from);
    const labelled = requests.findIndex((request) => request.method === "POST" && request.path.endsWith(`/issues/${story.issue}/labels`));
    const offered = requests.findIndex((request) => (request.body as { conclusion?: string } | undefined)?.conclusion === "action_required");
    const commented = requests.findLastIndex(
      (request) => request.path.includes("/comments") && String((request.body as { body?: string } | undefined)?.body).includes("/harness retry-blocked"),
    );
    expect(labelled).toBeGreaterThanOrEqual(0);
    expect(offered).toBeGreaterThan(labelled);
    expect(commented).toBeGreaterThan(labelled);
    expect(only(story, "harness / story")).toMatchObject({ conclusion: "action_required" });
  });

  it("keeps the failed attempt's clean-clone check run and creates one for the next attempt", async () => {
    const story = await newStory();
    await feed(story, retryingStory());
    const cleanClones = runsOf(story, "harness / clean-clone");
    expect(cleanClones.map((run) => [run.status, run.conclusion, run.output.title])).toEqual([
      ["completed", "failure", "Attempt 1: failed in a fresh clone (exit 1)"],
      ["queued", null, "Attempt 2: waiting"],
    ]);
    expect(cleanClones[0]!.output.summary).toContain("Error: ENOENT fixture.json");
    expect(runsOf(story, "harness / verifier").map((run) => run.conclusion)).toEqual(["success", null]);
    const storyRun = only(story, "harness / story");
    expect(storyRun.output.title).toBe("Attempt 2/3 running");
    expect(storyRun.output.summary).toContain("Attempt 1 was sent back from `verifier` to `implementer` (`clean-clone-failed`)");
    expect(statusComments(story)[0]!.body).toContain("⏳ Attempt 2 of 3 is running (stage `implementer`).");
    // Attempt 2 goes through: the new check runs complete, the old failed one is untouched.
    await feed(story, [stageStarted("verifier", 2), gate(2, 0), verdict(2, true), cleanClone(2, 0)]);
    expect(runsOf(story, "harness / clean-clone").map((run) => run.conclusion)).toEqual(["failure", "success"]);
    expect(runsOf(story, "harness / clean-clone")[0]!.history).toHaveLength(3);
  });

  it("finds its status comment again after a restart, ignoring a person's comment with the marker", async () => {
    const story = await newStory();
    await feed(story, [started()]);
    gh.addComment(OWNER, NAME, story.pull, { body: `${STATUS_MARKER}\nquoted by a person`, user: "writer" });
    const restarted = new GitHubReporter({
      octokit,
      owner: OWNER,
      repo: NAME,
      pullNumber: story.pull,
      issueNumber: story.issue,
      headSha: story.headSha,
      log: story.log,
      botLogin: gh.botLogin,
    });
    await feed(story, provisionBlockedStory().slice(1), restarted);
    const mine = statusComments(story).filter((comment) => comment.user === gh.botLogin);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.body).toContain("⛔ Blocked");
    expect(statusComments(story).find((comment) => comment.user === "writer")?.body).toBe(`${STATUS_MARKER}\nquoted by a person`);
  });

  it("re-posts the check runs on a new head commit, and removes the blocked label on re-admission", async () => {
    const story = await newStory();
    gh.addLabel(OWNER, NAME, story.issue, BLOCKED_LABEL);
    gh.addLabel(OWNER, NAME, story.pull, BLOCKED_LABEL);
    await feed(story, [started(true)]);
    expect(labelsOf(story.issue)).not.toContain(BLOCKED_LABEL);
    expect(labelsOf(story.pull)).not.toContain(BLOCKED_LABEL);
    await feed(story, completedStory().slice(1));
    const finalSha = await pushStoryBranch(gh, story.issue, "Final commit");
    await story.reporter.setHeadSha(finalSha);
    for (const name of ["harness / provision", "harness / verifier", "harness / clean-clone", "harness / story"]) {
      const before = only(story, name);
      const after = only(story, name, finalSha);
      expect([after.status, after.conclusion, after.output]).toEqual([before.status, before.conclusion, before.output]);
    }
    expect(story.reporter.checkRunIds()["harness / story"]).toBe(only(story, "harness / story", finalSha).id);
    // The same head again (a push that changed nothing) moves nothing: no request, still one check run of each.
    const requests = gh.state.requests.length;
    await story.reporter.setHeadSha(finalSha);
    expect(gh.state.requests.length).toBe(requests);
  });

  it("redacts tokens and secrets from everything it posts", async () => {
    const token = gh.mintToken();
    const story = await newStory(["super-secret-value"]);
    await feed(story, provisionBlockedStory(`remote: https://x-access-token:${token}@host/r.git\nAuthorization: token ${token}\nkey super-secret-value`));
    const bodies = gh.state.requests.filter((request) => request.body !== undefined).map((request) => JSON.stringify(request.body));
    expect(bodies.some((body) => body.includes("[REDACTED]"))).toBe(true);
    for (const body of bodies) {
      expect(body).not.toContain(token);
      expect(body).not.toContain("super-secret-value");
    }
  });

  it("never throws when GitHub refuses, and logs the failure", async () => {
    const story = await newStory();
    const token = gh.mintToken();
    gh.expireToken(token);
    const refused = new GitHubReporter({
      octokit: fakeOctokit(gh, { token }),
      owner: OWNER,
      repo: NAME,
      pullNumber: story.pull,
      issueNumber: story.issue,
      headSha: story.headSha,
      log: story.log,
    });
    await expect(feed(story, provisionBlockedStory(), refused)).resolves.toBeUndefined();
    const warnings = story.log.lines.filter((line) => line.level === "warn");
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings[0]!.details).toMatchObject({ err: { status: 401 } });
    expect(JSON.stringify(story.log.lines)).not.toContain(token);
    expect(gh.takeUnexpectedRequests().every((request) => request.status === 401)).toBe(true);
  });
});

describe("GitHubReporter redaction", () => {
  it("removes a token added to the live list after the reporter was made, and the App's own secrets, in every form", async () => {
    const tokens: string[] = ["ghs_initialtoken00000000000000000000"];
    const issue = gh.createIssue(OWNER, NAME, { title: "Leak @acme/owners ![x](http://t.invalid/p.png)", user: "writer", labels: ["story"] });
    const pull = await openStoryPull(gh, octokit, issue.number);
    const webhookSecret = "webhook-secret-value-1234";
    const reporter = new GitHubReporter({
      octokit,
      owner: OWNER,
      repo: NAME,
      pullNumber: pull.number,
      issueNumber: issue.number,
      headSha: pull.headSha,
      log: new RecordingLog(),
      secrets: tokens,
      appSecrets: [webhookSecret],
      revision: "2026-01-02T03:04:05Z",
      botLogin: gh.botLogin,
    });
    const refreshed = "refreshed-opaque-token-5678";
    tokens.push(refreshed);
    const tail = [
      `WEBHOOK_SECRET=${webhookSecret}`,
      `url x-access-token%3A${encodeURIComponent(refreshed)}@host`,
      `hex ${Buffer.from(refreshed).toString("hex")}`,
      `b64url ${Buffer.from(refreshed).toString("base64url")}`,
      "-----BEGIN PRIVATE KEY-----",
      "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
    ].join("\n");
    const story: Story = { issue: issue.number, pull: pull.number, headSha: pull.headSha, log: new RecordingLog(), reporter, snapshot: emptySnapshot() };
    await feed(story, [{ ...(started() as Extract<HistoryEvent, { kind: "run.started" }>), title: issue.title }, stageStarted("verifier"), gate(1, 1, tail)]);
    const summary = only(story, "harness / verifier").output?.summary ?? "";
    for (const leaked of [
      webhookSecret,
      refreshed,
      encodeURIComponent(refreshed),
      Buffer.from(refreshed).toString("hex"),
      Buffer.from(refreshed).toString("base64url"),
      "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
    ]) {
      expect([leaked, summary.includes(leaked)]).toEqual([leaked, false]);
    }
    const comment = statusComments(story)[0]?.body ?? "";
    expect(comment).toContain("revision `2026-01-02T03:04:05Z`");
    expect(comment).not.toMatch(/@acme/);
    expect(comment).not.toContain("![x]");
    expect(comment).not.toContain("http://t.invalid");
  });
});
