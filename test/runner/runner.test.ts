import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JOURNAL_FILE, readJournal } from "../../src/pipeline/index.js";
import type { JobLease } from "../../src/queue/index.js";
import { git, HARNESS_IDENTITY, storyDirName } from "../../src/workspace/index.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { fakeOctokit } from "../support/fake-github/client.js";
import { recordingLog } from "./recording-log.js";
import { realRunner, storyLease } from "./real-runner.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { independentTasks, planBody, plannedHarnessYml } from "../support/plan-story.js";

describe("story runner", () => {
  const fake = useFakeGitHub();
  let root: string;
  const { lines, log } = recordingLog();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-runner-"));
  });
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
  });

  /** The real runner (real pipeline, real reporter) against the fake, with its own data directory. */
  const realWorker = (
    home: string,
    extra: {
      maxResumes?: number;
      housekeeping?: { retentionDays: number; minFreeBytes: number };
      sandbox?: Sandbox;
      appSecrets?: string[];
      taskSlots?: number;
    } = {},
  ) => realRunner(fake, home, log, extra);

  /** A lease on a `start` job for issue `number` of acme/<name>. */
  const startLease = (name: string, number: number, title: string, repository: { id: number; cloneUrl: string }, interruptions = 0, body = ""): JobLease =>
    storyLease(fake, { name, number, title, repository, interruptions, body });

  it("comments on the issue when the story cannot start (the repository cannot be fetched)", async () => {
    const gone = await fake.addRepository({ owner: "acme", name: "gone", files: { "README.md": "x\n" } });
    const issue = fake.createIssue("acme", "gone", { title: "Nowhere", body: "", user: "acme" });
    const worker = realWorker(join(root, "home"));
    await worker(startLease("gone", issue.number, issue.title, { id: gone.id, cloneUrl: `${fake.url}/acme/missing.git` }), new AbortController().signal);
    const comment = fake.state.comments.find((candidate) => candidate.repo === "acme/gone" && candidate.issueNumber === issue.number);
    expect(comment?.body).toContain("could not start (git-failed)");
    for (const issued of fake.issuedTokens()) expect(comment?.body).not.toContain(issued.token);
    expect(fake.state.pulls.filter((pull) => pull.repo === "acme/gone")).toHaveLength(0);
    expect(fake.takeUnexpectedRequests()).toEqual([]);
  });

  it("redacts the App's own secrets from its logs and comments, not only its tokens", async () => {
    const secret = `whsec${randomBytes(12).toString("hex")}`;
    const gone = await fake.addRepository({ owner: "acme", name: "secretive", files: { "README.md": "x\n" } });
    const issue = fake.createIssue("acme", "secretive", { title: "Secret", body: "", user: "acme" });
    const before = lines.length;
    const worker = realWorker(join(root, "home-secretive"), { appSecrets: [secret] });
    // The fetch fails and git names the URL, secret and all, in its error.
    await worker(startLease("secretive", issue.number, issue.title, { id: gone.id, cloneUrl: `${fake.url}/acme/${secret}.git` }), new AbortController().signal);
    const comment = fake.state.comments.find((candidate) => candidate.repo === "acme/secretive" && candidate.issueNumber === issue.number);
    expect(comment?.body).toContain("could not start (git-failed)");
    expect(comment?.body).not.toContain(secret);
    const logged = lines.slice(before).join("\n");
    expect(logged).toContain("[REDACTED]");
    expect(logged).not.toContain(secret);
    expect(fake.takeUnexpectedRequests()).toEqual([]);
  });

  it("does not start a story on a nearly full disk, or where the sandbox cannot run, and says why on the issue", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "full", files: { "README.md": "x\n" } });
    const issue = fake.createIssue("acme", "full", { title: "No room", body: "", user: "acme" });
    const full = realWorker(join(root, "home-full"), { housekeeping: { retentionDays: 14, minFreeBytes: Number.MAX_SAFE_INTEGER } });
    await full(startLease("full", issue.number, issue.title, repo), new AbortController().signal);
    const noSandbox = realWorker(join(root, "home-nobox"), { sandbox: new Sandbox(sandboxSettingsFromEnv({}), { bwrap: "/nonexistent/bwrap" }) });
    await noSandbox(startLease("full", issue.number, issue.title, repo), new AbortController().signal);
    const bodies = fake.state.comments.filter((comment) => comment.repo === "acme/full" && comment.issueNumber === issue.number).map((comment) => comment.body);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toMatch(/could not start \(environment\)[\s\S]*Only \d+ MiB are free/);
    expect(bodies[1]).toMatch(/could not start \(environment\)[\s\S]*bubblewrap is not installed \(install it: apt-get install -y bubblewrap\)/);
    // Nothing was cloned or opened for it.
    expect(existsSync(join(root, "home-full", "repos"))).toBe(false);
    expect(fake.state.pulls.filter((pull) => pull.repo === "acme/full")).toHaveLength(0);
    fake.assertNoUnexpectedRequests();
  });

  it("answers a label on a completed story with its pull request, before cloning anything", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "done", files: { "README.md": "x\n" } });
    const issue = fake.createIssue("acme", "done", { title: "Finished", body: "", user: "acme" });
    const home = join(root, "home-done");
    const worker = realWorker(home);
    // The story's pull request exists and was marked ready: the story completed earlier.
    const main = (await fake.branchHead("acme", "done", "main"))!;
    const story = await git(["commit-tree", `${main}^{tree}`, "-p", main, "-m", "story"], { cwd: repo.bareDir, env: HARNESS_IDENTITY });
    await git(["update-ref", `refs/heads/harness/story-${issue.number}`, story], { cwd: repo.bareDir });
    const { data: pull } = await fakeOctokit(fake, { installation: true }).rest.pulls.create({
      owner: "acme",
      repo: "done",
      head: `harness/story-${issue.number}`,
      base: "main",
      title: "Story",
      draft: true,
    });
    fake.state.pulls.find((candidate) => candidate.repo === "acme/done" && candidate.number === pull.number)!.draft = false;
    await worker(startLease("done", issue.number, issue.title, repo), new AbortController().signal);
    const comments = fake.state.comments.filter((candidate) => candidate.repo === "acme/done" && candidate.issueNumber === issue.number);
    expect(comments.map((comment) => comment.body)).toEqual([
      `Story #${issue.number} already completed: ${fake.url}/acme/done/pull/${pull.number}. Nothing new was started.`,
    ]);
    expect(existsSync(join(home, "repos"))).toBe(false);
    expect(fake.state.checkRuns.filter((run) => run.repo === "acme/done")).toHaveLength(0);
    fake.assertNoUnexpectedRequests();
  });

  it("redacts the installation token by its value in what it reports, even in a form no pattern recognises", async () => {
    const opaque = `v1${randomBytes(20).toString("hex")}`;
    const harnessYml = [
      "agent:",
      '  command: "true"',
      "test:",
      `  command: "echo suite saw ${opaque}; exit 1"`,
      "provision:",
      '  command: "true"',
      "max_attempts: 1",
      "",
    ].join("\n");
    const repo = await fake.addRepository({ owner: "acme", name: "leaky", files: { "README.md": "x\n", ".github/harness.yml": harnessYml } });
    const issue = fake.createIssue("acme", "leaky", { title: "Leaks", body: "", user: "acme" });
    fake.issueNextTokenAs(opaque);
    const seen = fake.state.requests.length;
    await realWorker(join(root, "home-leaky"))(startLease("leaky", issue.number, issue.title, repo), new AbortController().signal);
    expect(fake.issuedTokens().map((issued) => issued.token)).toContain(opaque);

    const verifier = fake.state.checkRuns.find((run) => run.repo === "acme/leaky" && run.name.includes("verifier"));
    const posted = `${verifier?.output.summary ?? ""}${verifier?.output.text ?? ""}`;
    expect(posted).toContain("suite saw [REDACTED]");
    for (const request of fake.state.requests.slice(seen)) expect(JSON.stringify(request.body ?? "")).not.toContain(opaque);
    expect(lines.join("\n")).not.toContain(opaque);
    expect(fake.takeUnexpectedRequests()).toEqual([]);
  });

  it("reports a story interrupted more often than it may be resumed as blocked (interrupted), with the Retry button", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "flaky", files: { "README.md": "x\n" } });
    const issue = fake.createIssue("acme", "flaky", { title: "Keeps dying", body: "", user: "acme" });
    const worker = realWorker(join(root, "home"), { maxResumes: 1 });
    const lease = startLease("flaky", issue.number, issue.title, repo, 2);
    await worker(lease, new AbortController().signal);

    const story = fake.state.checkRuns.find((run) => run.repo === "acme/flaky" && run.name === "harness / story");
    expect(story).toMatchObject({ status: "completed", conclusion: "action_required" });
    expect(`${story?.output.summary}${story?.output.text}`).toContain("interrupted");
    expect(story?.actions.map((action) => action.identifier)).toEqual(["retry"]);
    expect(fake.state.issue(fake.state.repo("acme", "flaky")!, issue.number)?.labels).toContain("harness:blocked");
    expect(fake.state.pulls.filter((pull) => pull.repo === "acme/flaky")).toHaveLength(1);
    expect(lines.some((line) => line.startsWith("error story stopped") && line.includes('"failureClass":"interrupted"'))).toBe(true);
    fake.assertNoUnexpectedRequests();
  });

  it("caps a plan's concurrency at the runner's own limit (HARNESS_CONCURRENCY): two independent tasks with plan.concurrency 4 run one after the other on a runner of one slot", async () => {
    // The agent lives in the repository: each task writes its own file, the verifier passes.
    const agent = [
      "mkdir -p src",
      'echo "$HARNESS_TASK" > "src/$HARNESS_TASK.txt"',
      `printf '{"verdict":"pass","findings":[]}' > "$HARNESS_ARTIFACT_DIR/verdict.json"`,
      "",
    ].join("\n");
    const harnessYml = plannedHarnessYml("sh tools/agent.sh", 4);
    const repo = await fake.addRepository({
      owner: "acme",
      name: "planned",
      files: { "README.md": "x\n", "tools/agent.sh": agent, ".github/harness.yml": harnessYml },
    });
    const body = planBody(independentTasks(["a", "b"]), "Two parts.\n\n");
    const issue = fake.createIssue("acme", "planned", { title: "Two parts", body, user: "acme" });
    const home = join(root, "home-planned");
    await realWorker(home, { taskSlots: 1 })(startLease("planned", issue.number, issue.title, repo, 0, body), new AbortController().signal);

    const runs = join(home, "runs", storyDirName(`acme/planned#${issue.number}`));
    const [runId] = readdirSync(runs);
    const journal = readJournal(join(runs, runId!, JOURNAL_FILE));
    const at = (kind: string, taskId: string): number => journal.findIndex((event) => event.kind === kind && "taskId" in event && event.taskId === taskId);
    expect(journal.filter((event) => event.kind === "story.completed" || event.kind === "story.blocked").map((event) => event.kind)).toEqual([
      "story.completed",
    ]);
    expect(at("task.started", "a")).toBeGreaterThanOrEqual(0);
    // One slot: the second task of the wave starts only once the first has finished.
    expect(at("task.started", "b")).toBeGreaterThan(at("task.finished", "a"));
    expect(await git(["show", `harness/story-${issue.number}:src/b.txt`], { cwd: repo.bareDir })).toBe("b");
    expect(fake.takeUnexpectedRequests()).toEqual([]);
  });
});
