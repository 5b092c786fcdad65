/**
 * The story adapter against the strict fake GitHub: the only way the runner talks to GitHub.
 * Its tokens are scoped to the story's repository, it opens the story's draft pull request
 * once, reads the configuration of the default branch, marks the pull request ready, and
 * redacts every token it handed out (in every form) with the App's own secrets.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { HARNESS_CONFIG_PATH, startRefusal, storyGitHub, StoryStartRefusedError, type AppOctokit, type StoryGitHub } from "../../src/github/story/index.js";
import { renderPullTitle } from "../../src/github/report/index.js";
import { GIT_TOKEN_PERMISSIONS, STORY_API_PERMISSIONS } from "../../src/github/story/index.js";
import type { StoryJob } from "../../src/queue/index.js";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { fakeOctokit } from "../support/fake-github/client.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { RecordingLog } from "./fake-setup.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

const OWNER = "acme";
const gh = useFakeGitHub();
let repoId: number;
let bareRepo: { id: number; bareDir: string };

beforeAll(async () => {
  repoId = (await gh.addRepository({ owner: OWNER, name: "shop", files: { "README.md": "# shop\n", [HARNESS_CONFIG_PATH]: "max_attempts: 2\n" } })).id;
  await gh.addRepository({ owner: OWNER, name: "plain", files: { "README.md": "# plain\n", ".github/harness.yml/inner.txt": "a folder, not a file\n" } });
  bareRepo = await gh.addRepository({ owner: OWNER, name: "bare", files: { "README.md": "# bare\n" } });
  gh.setPermission(OWNER, "shop", "writer", "write");
});
afterAll(async () => {
  removeTempDirs();
});

const adapter = (name = "shop", id = repoId, appSecrets: string[] = []): StoryGitHub =>
  storyGitHub(
    {
      appOctokit: async () => fakeOctokit(gh) as AppOctokit,
      installationId: gh.installationId,
      repository: { id, owner: OWNER, name },
      throttle: false,
      appSecrets,
    },
    1,
  );

const job = (requestedBy: string, number: number): StoryJob => ({
  storyKey: `${OWNER}/shop#${number}`,
  kind: "start",
  installationId: gh.installationId,
  requestedBy,
  deliveryId: "d1",
  enqueuedAt: new Date().toISOString(),
  repository: { id: repoId, owner: OWNER, name: "shop", defaultBranch: "main", cloneUrl: `${gh.url}/${OWNER}/shop.git` },
  issue: { number, title: "T", body: "" },
});

describe("the story adapter", () => {
  it("asks nothing of GitHub before it connects, then mints one token per use, for the story's repository only", async () => {
    const before = gh.issuedTokens().length;
    const github = adapter();
    expect(github.connected).toBe(false);
    await expect(github.harnessConfigText("main")).rejects.toThrow(/not connected/);
    await github.connect();
    const env = await github.gitAuthEnv();
    expect(await github.gitAuthEnv()).toEqual(env); // the git token is minted once and reused
    const issued = gh.issuedTokens().slice(before);
    expect(issued.map((token) => [token.repositoryIds, token.permissions])).toEqual([
      [[repoId], STORY_API_PERMISSIONS],
      [[repoId], GIT_TOKEN_PERMISSIONS],
    ]);
    // Git authenticates with the git token through the environment only.
    const clone = makeTempDir();
    await git(["clone", "-q", `${gh.url}/${OWNER}/shop.git`, clone], { cwd: clone, env: env });
  });

  it("reads the configuration from the default branch: its text, undefined when absent, an error for a folder", async () => {
    const github = adapter();
    await github.connect();
    expect(await github.harnessConfigText("main")).toBe("max_attempts: 2\n");
    const plain = adapter("plain", gh.state.repo(OWNER, "plain")!.id);
    await plain.connect();
    await expect(plain.harnessConfigText("main")).rejects.toThrow(`${HARNESS_CONFIG_PATH} is not a file`);
    const bare = adapter("bare", gh.state.repo(OWNER, "bare")!.id);
    await bare.connect();
    expect(await bare.harnessConfigText("main")).toBeUndefined();
  });

  it("confirms a writer's admission and tells the issue when whoever queued the job cannot write", async () => {
    const github = adapter();
    await github.connect();
    const issue = gh.createIssue(OWNER, "shop", { title: "Admit", user: "writer" });
    const log = new RecordingLog();
    expect(await github.confirmAdmission(job("writer", issue.number), log)).toBe(true);
    expect(await github.confirmAdmission(job("stranger", issue.number), log)).toBe(false);
    expect(gh.state.commentsOn(OWNER, "shop", issue.number).map((comment) => comment.body)).toEqual([expect.stringContaining("@stranger")]);
  });

  /** Pushes an empty start commit to `branch` of the shop repository, as the runner does before it opens the draft. */
  async function pushStartCommit(github: StoryGitHub, branch: string): Promise<void> {
    const clone = makeTempDir();
    const env = await github.gitAuthEnv();
    await git(["clone", "-q", `${gh.url}/${OWNER}/shop.git`, clone], { cwd: clone, env });
    await git(["commit", "-q", "--allow-empty", "-m", "start"], { cwd: clone, env: HARNESS_IDENTITY });
    await git(["push", "-q", "origin", `HEAD:refs/heads/${branch}`], { cwd: clone, env });
  }

  it("opens the story's draft pull request once, finds it again, and marks it ready for review", async () => {
    const github = adapter();
    await github.connect();
    const long = "x".repeat(256); // GitHub's longest issue title; the pull request's title must still fit
    const issue = gh.createIssue(OWNER, "shop", { title: long, user: "writer" });
    const branch = `harness/story-${issue.number}`;
    await pushStartCommit(github, branch);
    expect(await github.findStoryPull(issue.number)).toBeUndefined();

    const opened = await github.ensureDraftPull({ branch, defaultBranch: "main", issue: { number: issue.number, title: long } });
    expect(opened.opened).toBe(true);
    const record = gh.state.findPull(OWNER, "shop", branch)!;
    expect(record).toMatchObject({ number: opened.pullNumber, draft: true, title: renderPullTitle({ number: issue.number, title: long }), baseRef: "main" });
    expect(record.title.length).toBeLessThanOrEqual(256);
    expect(record.body).toContain(`Closes #${issue.number}`);

    const again = await github.ensureDraftPull({ branch, defaultBranch: "main", issue: { number: issue.number, title: long } });
    expect(again).toEqual({ ...opened, opened: false });
    expect(gh.state.pulls.filter((pull) => pull.headRef === branch)).toHaveLength(1);
    expect(await github.findStoryPull(issue.number)).toMatchObject({ number: opened.pullNumber, draft: true, state: "open" });

    await github.markReadyForReview(opened.pullNodeId);
    expect(gh.state.findPull(OWNER, "shop", branch)!.draft).toBe(false);
    expect(await github.findStoryPull(issue.number)).toMatchObject({ draft: false });
  });

  it("opens the draft without looking for one when told the branch has had none (the runner just asked)", async () => {
    const github = adapter();
    await github.connect();
    const issue = gh.createIssue(OWNER, "shop", { title: "Told", user: "writer" });
    const branch = `harness/story-${issue.number}`;
    await pushStartCommit(github, branch);
    // Any look would fail: the listing is refused for as long as the draft is opened.
    const window = gh.injectFailure({ method: "GET", path: /\/pulls$/, failure: { kind: "bad-gateway" } });
    try {
      const opened = await github.ensureDraftPull({ branch, defaultBranch: "main", issue: { number: issue.number, title: "Told" }, noPullYet: true });
      expect(opened.opened).toBe(true);
      expect(window.served).toBe(0);
      expect(gh.state.findPull(OWNER, "shop", branch)).toMatchObject({ number: opened.pullNumber, draft: true });
    } finally {
      window.close();
    }
  });

  it("gives its reporter a live list of its tokens, and redacts them in every form with the App's secrets", async () => {
    const github = adapter("shop", repoId, ["webhook-secret-value"]);
    expect(github.redact("nothing yet")).toBe("nothing yet");
    await github.connect();
    const target = github.reporterTarget({ pullNumber: 3, issueNumber: 1, headSha: "a".repeat(40), log: new RecordingLog() });
    expect(target).toMatchObject({ owner: OWNER, repo: "shop", pullNumber: 3, issueNumber: 1, installationId: gh.installationId });
    expect(target.secrets).toHaveLength(1);
    const env = await github.gitAuthEnv();
    expect(target.secrets).toHaveLength(2); // the list the reporter holds grows as tokens are minted
    const [api, gitToken] = target.secrets as [string, string];
    const header = env.GIT_CONFIG_VALUE_0!;
    expect(header).toBe(`Authorization: Basic ${Buffer.from(`x-access-token:${gitToken}`).toString("base64")}`);
    const text = `api ${api}; basic ${header.slice("Authorization: Basic ".length)}; url https://x:${gitToken}@host/r.git; secret webhook-secret-value`;
    const redacted = github.redact(text);
    for (const value of [api, gitToken, "webhook-secret-value", Buffer.from(`x-access-token:${gitToken}`).toString("base64")])
      expect(redacted).not.toContain(value);
    expect(redacted).toContain("[REDACTED]");
  });

  it("reads the tips of the default branch and the story's branches, and makes the start branch with the git token", async () => {
    const github = adapter("bare", bareRepo.id);
    await github.connect();
    const { bareDir } = bareRepo;
    const main = (await gh.branchHead(OWNER, "bare", "main"))!;
    for (const branch of ["harness/story-4-a", "harness/story-5"]) await git(["update-ref", `refs/heads/${branch}`, main], { cwd: bareDir });
    expect([...(await github.branchTips({ defaultBranch: "main", prefix: "harness/story-4" }))]).toEqual([
      ["harness/story-4-a", main],
      ["main", main],
    ]);
    // A default branch GitHub does not have is absent, not an error.
    expect([...(await github.branchTips({ defaultBranch: "trunk", prefix: "harness/story-9" }))]).toEqual([]);

    const before = gh.state.requests.length;
    const tree = await git(["rev-parse", `${main}^{tree}`], { cwd: bareDir });
    const start = {
      branch: "harness/story-4",
      tree,
      parent: main,
      message: "Start\n",
      signature: { name: "story-harness", email: "story-harness@users.noreply.github.com", date: "2026-03-01T00:00:00Z" },
    };
    const made = await github.createStartBranch(start);
    expect(made.state).toBe("created");
    expect(await gh.branchHead(OWNER, "bare", "harness/story-4")).toBe(made.state === "created" ? made.sha : "");
    expect(await github.createStartBranch(start)).toEqual({ state: "exists" });
    // Written with the git token (contents: write): the reporting one would get a 403, which the fake records as unexpected.
    const writes = gh.state.requests.slice(before).filter((request) => request.route?.includes("/git/"));
    expect(writes.map((request) => `${request.route} ${request.status}`)).toEqual([
      "/repos/{owner}/{repo}/git/commits 201",
      "/repos/{owner}/{repo}/git/refs 201",
      "/repos/{owner}/{repo}/git/commits 201",
      "/repos/{owner}/{repo}/git/refs 422",
    ]);
    // A final refusal becomes the story's typed error; a failure that is no HTTP answer stays as it is.
    const refused = await github.createStartBranch({ ...start, branch: "harness/story-6", tree: "1".repeat(40) }).catch(startRefusal);
    expect(refused).toBeInstanceOf(StoryStartRefusedError);
    expect(refused).toMatchObject({ failureClass: "git-failed", status: 422 });
    expect((refused as Error).message).toContain("Tree SHA does not exist");
    const bug = new TypeError("not an answer");
    expect(startRefusal(bug)).toBe(bug);
  });
});
