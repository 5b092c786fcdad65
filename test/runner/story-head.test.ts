/**
 * A story's head without git round trips GitHub's API can answer: the start commit and branch
 * are made through the Git data API (no push), and the repository cache is fetched only when
 * GitHub's tips of the story's branches differ from its own. Real runner, real git, the fake.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jest } from "@jest/globals";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { type AddedRepository, type RecordedRequest } from "../support/fake-github/index.js";
import { eventually } from "../support/poll.js";
import { controlledSleep } from "../support/controlled-sleep.js";
import { AGENT_SCRIPT } from "../e2e/scenario.js";
import { recordingLog } from "./recording-log.js";
import { realRunner, storyLease } from "./real-runner.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

jest.setTimeout(180_000);

const HARNESS_YML = [
  "agent:",
  "  command: sh .harness-test/agent.sh",
  "test:",
  "  command: test -f feature.txt",
  "provision:",
  '  command: "true"',
  "max_attempts: 1",
  "",
].join("\n");

describe("a story's head", () => {
  const fake = useFakeGitHub();
  let root: string;
  const { log } = recordingLog();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-head-"));
  });
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
  });

  const addRepository = (name: string): Promise<AddedRepository> =>
    fake.addRepository({
      owner: "acme",
      name,
      files: { "README.md": `# ${name}\n`, ".github/harness.yml": HARNESS_YML, ".harness-test/agent.sh": AGENT_SCRIPT },
    });

  /** Runs a start job for a new issue of acme/<name> in `home`; returns the issue's number and the requests the job made. */
  const runStory = async (name: string, repo: AddedRepository, home: string): Promise<{ number: number; requests: RecordedRequest[] }> => {
    const issue = fake.createIssue("acme", name, { title: `Story of ${name}`, body: "", user: "acme" });
    const seen = fake.state.requests.length;
    await realRunner(fake, home, log)(storyLease(fake, { name, number: issue.number, repository: repo, title: issue.title }), new AbortController().signal);
    return { number: issue.number, requests: fake.state.requests.slice(seen) };
  };

  /** The requests of a job's head: those before its first check run (made once the branch and pull request are there). */
  const head = (requests: RecordedRequest[]): RecordedRequest[] => {
    const first = requests.findIndex((request) => request.method === "POST" && request.path.endsWith("/check-runs"));
    expect(first).toBeGreaterThan(0);
    return requests.slice(0, first);
  };
  const gitService = (requests: RecordedRequest[], service: string): RecordedRequest[] =>
    requests.filter((request) => request.route === "git" && (request.path.endsWith(`/${service}`) || request.query.includes(`service=${service}`)));
  const apiCalls = (requests: RecordedRequest[], method: string, suffix: RegExp): number =>
    requests.filter((request) => request.method === method && suffix.test(decodeURIComponent(request.path))).length;

  const completed = (name: string): boolean =>
    fake.state.checkRuns.filter((run) => run.repo === `acme/${name}` && run.name === "harness / story").at(-1)?.conclusion === "success";
  const commitOf = (bareDir: string, rev: string, format: string): Promise<string> =>
    git(["log", "-1", `--format=${format}`, rev], { cwd: bareDir, readOnly: true });

  /** Commits a file on main of the fake's repository, as a person pushing would; returns the new head. */
  const pushToMain = async (name: string, bareDir: string): Promise<string> => {
    const clone = mkdtempSync(join(root, "clone-"));
    await git(["clone", "--quiet", bareDir, clone], { cwd: root });
    writeFileSync(join(clone, "NEWS.md"), "Main moved on.\n");
    await git(["add", "-A"], { cwd: clone });
    await git(["commit", "--quiet", "-m", "Main moves on"], { cwd: clone, env: HARNESS_IDENTITY });
    await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], { cwd: clone });
    rmSync(clone, { recursive: true, force: true });
    return (await fake.branchHead("acme", name, "main"))!;
  };

  it("starts a story without a push, and the next ones of the repository without a fetch until the default branch moves", async () => {
    const repo = await addRepository("quiet");
    const home = join(root, "home-quiet");
    const main = (await fake.branchHead("acme", "quiet", "main"))!;

    // The first story: the cache is new, so it is fetched; the start commit and branch are GitHub's.
    const first = await runStory("quiet", repo, home);
    const firstHead = head(first.requests);
    expect(gitService(firstHead, "git-receive-pack")).toEqual([]);
    expect(gitService(firstHead, "git-upload-pack").length).toBeGreaterThan(0);
    expect(apiCalls(firstHead, "POST", /\/git\/commits$/)).toBe(1);
    expect(apiCalls(firstHead, "POST", /\/git\/refs$/)).toBe(1);
    expect(completed("quiet")).toBe(true);
    const firstBranch = `harness/story-${first.number}`;
    const pull = fake.state.pulls.find((candidate) => candidate.repo === "acme/quiet" && candidate.headRef === firstBranch);
    expect(pull).toBeDefined();
    // The start commit is the one GitHub made: on main, with the story's title, and the work on top of it.
    const start = (await git(["rev-list", "--max-parents=1", "--reverse", `main..${firstBranch}`], { cwd: repo.bareDir, readOnly: true })).split("\n")[0]!;
    expect(await commitOf(repo.bareDir, start, "%P%n%s%n%an <%ae>")).toBe(
      `${main}\nStory #${first.number}: Story of quiet\nstory-harness <story-harness@users.noreply.github.com>`,
    );
    expect(apiCalls(first.requests, "POST", /\/git\/commits$/)).toBe(1);

    // The second story of the repository, nothing moved: no fetch at all in its head.
    const second = await runStory("quiet", repo, home);
    const secondHead = head(second.requests);
    expect(gitService(secondHead, "git-upload-pack")).toEqual([]);
    expect(gitService(secondHead, "git-receive-pack")).toEqual([]);
    expect(apiCalls(secondHead, "GET", /\/git\/matching-refs\/heads\/harness\/story-\d+$/)).toBe(1);
    expect(completed("quiet")).toBe(true);
    expect(await commitOf(repo.bareDir, `harness/story-${second.number}`, "%s")).not.toBe("");

    // The first story run again (`/harness retry-blocked`): its branch is reused, no start commit is asked for.
    const seen = fake.state.requests.length;
    await realRunner(
      fake,
      home,
      log,
    )(
      storyLease(fake, { name: "quiet", number: first.number, repository: repo, title: `Story of quiet`, kind: "retry-blocked" }),
      new AbortController().signal,
    );
    const resumed = fake.state.requests.slice(seen);
    expect(apiCalls(resumed, "POST", /\/git\/(commits|refs)$/)).toBe(0);
    expect(gitService(head(resumed), "git-upload-pack")).toEqual([]);
    expect(completed("quiet")).toBe(true);

    // Main moves on: the third story's head fetches, and the story starts on the new tip.
    const moved = await pushToMain("quiet", repo.bareDir);
    const third = await runStory("quiet", repo, home);
    expect(gitService(head(third.requests), "git-upload-pack").length).toBeGreaterThan(0);
    expect(completed("quiet")).toBe(true);
    const thirdStart = (
      await git(["rev-list", "--max-parents=1", "--reverse", `main..harness/story-${third.number}`], { cwd: repo.bareDir, readOnly: true })
    ).split("\n")[0]!;
    expect(await commitOf(repo.bareDir, thirdStart, "%P")).toBe(moved);
    fake.assertNoUnexpectedRequests();
  });

  it("completes on GitHub's commit when GitHub makes the start commit otherwise (signed): the branch is fetched", async () => {
    const repo = await addRepository("signed");
    const home = join(root, "home-signed");
    // A story first, so the cache is known and the head's fetch is only the fallback's.
    await runStory("signed", repo, home);
    const window = fake.injectFailure({ method: "POST", path: /\/git\/commits$/, failure: { kind: "signed-commits" } });
    const story = await runStory("signed", repo, home);
    window.close();
    expect(window.served).toBe(1);
    const storyHead = head(story.requests);
    expect(gitService(storyHead, "git-receive-pack")).toEqual([]);
    // GitHub's commit is not the cache's own: the story branch is fetched.
    const fetches = gitService(storyHead, "git-upload-pack").filter((request) => request.method === "POST");
    expect(fetches.length).toBeGreaterThan(0);
    expect(completed("signed")).toBe(true);
    const branch = `harness/story-${story.number}`;
    const start = (await git(["rev-list", "--max-parents=1", "--reverse", `main..${branch}`], { cwd: repo.bareDir, readOnly: true })).split("\n")[0]!;
    expect(await git(["cat-file", "commit", start], { cwd: repo.bareDir, readOnly: true })).toContain("gpgsig ");
    fake.assertNoUnexpectedRequests();
  });

  it("reuses a branch someone made while the story started (422 Reference already exists)", async () => {
    const repo = await addRepository("raced");
    const home = join(root, "home-raced");
    const issue = fake.createIssue("acme", "raced", { title: "Raced", body: "", user: "acme" });
    const branch = `harness/story-${issue.number}`;
    const gate = fake.holdRequests({ method: "POST", path: /\/git\/refs$/ });
    const job = realRunner(
      fake,
      home,
      log,
    )(storyLease(fake, { name: "raced", number: issue.number, repository: repo, title: issue.title }), new AbortController().signal);
    await eventually("the ref's creation to wait at the gate", () => (gate.waiting > 0 ? true : undefined));
    // Someone else makes the story branch meanwhile, on a commit of their own.
    const main = (await fake.branchHead("acme", "raced", "main"))!;
    const theirs = await git(["commit-tree", `${main}^{tree}`, "-p", main, "-m", "Made elsewhere"], { cwd: repo.bareDir, env: HARNESS_IDENTITY });
    await git(["update-ref", `refs/heads/${branch}`, theirs], { cwd: repo.bareDir });
    gate.open();
    await job;
    expect(completed("raced")).toBe(true);
    const head = (await fake.branchHead("acme", "raced", branch))!;
    // The story's work sits on the branch as it was made elsewhere.
    expect(await git(["merge-base", "--is-ancestor", theirs, head], { cwd: repo.bareDir, readOnly: true })).toBe("");
    expect(fake.state.requests.some((request) => request.path.endsWith("/git/refs") && request.status === 422)).toBe(true);
    fake.assertNoUnexpectedRequests();
  });

  it("waits while GitHub will not make the start commit yet (a secondary rate limit), then starts the story", async () => {
    const repo = await addRepository("down");
    const issue = fake.createIssue("acme", "down", { title: "Down", body: "", user: "acme" });
    const { sleep, waits, wake } = controlledSleep();
    const window = fake.injectFailure({ method: "POST", path: /\/git\/commits$/, failure: { kind: "secondary-rate-limit", retryAfterSeconds: 1 } });
    const seen = fake.state.requests.length;
    const job = realRunner(fake, join(root, "home-down"), log, { githubDown: { sleep } })(
      storyLease(fake, { name: "down", number: issue.number, repository: repo, title: issue.title }),
      new AbortController().signal,
    );
    await eventually("the runner to wait for GitHub", () => (waits.length > 0 ? true : undefined));
    window.close();
    wake();
    await job;
    // The job waited once, as GitHub asked; no push made the branch.
    expect(window.served).toBe(1);
    expect(waits).toHaveLength(1);
    expect(completed("down")).toBe(true);
    expect(gitService(head(fake.state.requests.slice(seen)), "git-receive-pack")).toEqual([]);
    fake.assertNoUnexpectedRequests();
  });

  it("says on the issue that the story could not start (git-failed) when GitHub refuses its branch", async () => {
    const repo = await addRepository("ruled");
    const issue = fake.createIssue("acme", "ruled", { title: "Ruled out", body: "", user: "acme" });
    const window = fake.injectFailure({
      method: "POST",
      path: /\/git\/refs$/,
      failure: { kind: "refused", status: 422, message: "Repository rule violations found" },
    });
    await realRunner(
      fake,
      join(root, "home-ruled"),
      log,
    )(storyLease(fake, { name: "ruled", number: issue.number, repository: repo, title: issue.title }), new AbortController().signal);
    window.close();
    expect(window.served).toBe(1);
    const comment = fake.state.comments.find((candidate) => candidate.repo === "acme/ruled" && candidate.issueNumber === issue.number);
    expect(comment?.body).toContain("could not start (git-failed)");
    expect(comment?.body).toContain("Repository rule violations found");
    expect(await fake.branchHead("acme", "ruled", `harness/story-${issue.number}`)).toBeNull();
    expect(fake.state.pulls.filter((pull) => pull.repo === "acme/ruled")).toHaveLength(0);
    fake.assertNoUnexpectedRequests();
  });
});
