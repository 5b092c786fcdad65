import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppOctokit } from "../../src/github/story/index.js";
import type { Sleep } from "../../src/github/story/index.js";
import { EmbeddedQueue, type JobWorker, type StoryJob } from "../../src/queue/index.js";
import { storyKey } from "../../src/story-key/index.js";
import {} from "../queue/helpers.js";
import { recordingLog } from "./recording-log.js";
import { appOctokitOf } from "../support/outbox-fixture.js";
import { realRunner } from "./real-runner.js";
import { controlledSleep } from "../support/controlled-sleep.js";
import { until } from "../support/poll.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

/**
 * GitHub down when a job starts: its first calls fail with a 5xx, a refused connection or a
 * rate limit, and the job is kept and asked again later instead of failing. No clock: the
 * runner's sleep is the test's, which records the wait asked for and returns when the test
 * says (after it has closed the failure window), or rejects when the queue stops.
 */
describe("a story started while GitHub is down", () => {
  const fake = useFakeGitHub();
  let root: string;
  const { lines, log } = recordingLog();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-github-down-"));
  });
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
  });
  afterEach(() => fake.takeUnexpectedRequests());

  /** The App's octokit as `harness serve` configures it: no retries of its own, no client-side throttling. */
  const quietOctokit = (baseUrl: string): AppOctokit => appOctokitOf(fake, { baseUrl, quiet: true });

  const runner = (home: string, sleep: Sleep, appOctokit: () => Promise<AppOctokit> = async () => quietOctokit(fake.apiUrl)): JobWorker =>
    realRunner(fake, home, log, { appOctokit, githubDown: { sleep } });

  /**
   * A story whose repository cannot be fetched: once its first GitHub calls succeed it stops at
   * the fetch and says so on the issue ("could not start (git-failed)"), which shows it got past them.
   */
  async function unfetchableStory(name: string, installationId = fake.installationId): Promise<StoryJob> {
    const repo = await fake.addRepository({ owner: "acme", name, files: { "README.md": "x\n" } });
    const issue = fake.createIssue("acme", name, { title: `Story of ${name}`, body: "", user: "acme" });
    return {
      storyKey: storyKey("acme", name, issue.number),
      kind: "start",
      installationId,
      repository: { id: repo.id, owner: "acme", name, cloneUrl: `${fake.url}/acme/${name}-missing.git`, defaultBranch: "main" },
      issue: { number: issue.number, title: issue.title, body: "" },
      requestedBy: "acme",
      deliveryId: `d-${name}`,
      enqueuedAt: new Date().toISOString(),
    };
  }

  const commentsOn = (job: StoryJob): string[] =>
    fake.state.comments
      .filter((comment) => comment.repo === `acme/${job.repository.name}` && comment.issueNumber === job.issue.number)
      .map((comment) => comment.body);

  it("keeps a job whose token request gets 502s queued, across a restart, and runs it once GitHub answers", async () => {
    const dir = join(root, "queue-502");
    const job = await unfetchableStory("bad-gateway");
    const window = fake.injectFailure({ method: "POST", path: /\/app\/installations\/\d+\/access_tokens$/, failure: { kind: "bad-gateway" } });
    const first = controlledSleep();
    const queue = await EmbeddedQueue.open({ dir, rescanMs: 50 });
    queue.start(runner(join(root, "home-502"), first.sleep));
    expect((await queue.enqueue(job)).accepted).toBe(true);
    await until("the job to wait for GitHub", () => first.waits.length === 1);
    expect(first.waits).toEqual([1000]);
    expect(window.served).toBe(1);
    // Not failed, not removed, nothing said on the issue.
    expect((await queue.snapshot()).map((view) => view.job.storyKey)).toEqual([job.storyKey]);
    expect(commentsOn(job)).toEqual([]);
    // The App stops while the job waits: the job stays on disk and the next start takes it up.
    await queue.close({ abortRunning: true });

    const second = controlledSleep();
    const reopened = await EmbeddedQueue.open({ dir, rescanMs: 50 });
    try {
      expect((await reopened.snapshot()).map((view) => view.job.storyKey)).toEqual([job.storyKey]);
      reopened.start(runner(join(root, "home-502"), second.sleep));
      await until("the restarted job to wait for GitHub", () => second.waits.length === 1);
      expect(window.served).toBe(2);
      window.close();
      second.wake();
      await until("the story to get past its first calls", () => commentsOn(job).length === 1);
      await until("the job to finish", async () => (await reopened.snapshot()).length === 0);
      expect(commentsOn(job)[0]).toContain("could not start (git-failed)");
      expect(second.waits).toEqual([1000]);
    } finally {
      await reopened.close({ abortRunning: true });
    }
  });

  it("waits as long as GitHub's retry-after says when the admission check is rate limited", async () => {
    const job = await unfetchableStory("rate-limited");
    const window = fake.injectFailure({
      method: "GET",
      path: /\/collaborators\/[^/]+\/permission$/,
      failure: { kind: "secondary-rate-limit", retryAfterSeconds: 7 },
    });
    const { sleep, waits, wake } = controlledSleep();
    const done = runner(join(root, "home-403"), sleep)({ jobId: "job-403", job, interruptions: 0 }, new AbortController().signal);
    await until("the job to wait for GitHub", () => waits.length === 1);
    expect(waits).toEqual([7000]);
    expect(commentsOn(job)).toEqual([]);
    window.close();
    wake();
    await done;
    expect(window.served).toBe(1);
    expect(commentsOn(job)).toHaveLength(1);
    expect(commentsOn(job)[0]).toContain("could not start (git-failed)");
    expect(lines.some((line) => line.startsWith("warn GitHub did not answer the story's first calls") && line.includes('"status":403'))).toBe(true);
  });

  it("backs off and asks again when the connection to GitHub is refused", async () => {
    const job = await unfetchableStory("refused");
    // A port nobody listens on: taken, then given back.
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    let calls = 0;
    const appOctokit = async (): Promise<AppOctokit> => quietOctokit((calls += 1) <= 2 ? `http://127.0.0.1:${closedPort}` : fake.apiUrl);
    const { sleep, waits, wake } = controlledSleep();
    const done = runner(join(root, "home-refused"), sleep, appOctokit)({ jobId: "job-refused", job, interruptions: 0 }, new AbortController().signal);
    await until("the first wait", () => waits.length === 1);
    wake();
    await until("the second wait", () => waits.length === 2);
    // Backoff doubles while GitHub stays unreachable.
    expect(waits).toEqual([1000, 2000]);
    expect(commentsOn(job)).toEqual([]);
    wake();
    await done;
    expect(calls).toBe(3);
    expect(commentsOn(job)[0]).toContain("could not start (git-failed)");
  });

  it("does not wait on a final answer: an installation GitHub does not know stops the job at once", async () => {
    const job = await unfetchableStory("no-installation", 987_654);
    const { sleep, waits } = controlledSleep();
    const before = lines.length;
    await runner(join(root, "home-404"), sleep)({ jobId: "job-404", job, interruptions: 0 }, new AbortController().signal);
    expect(waits).toEqual([]);
    expect(lines.slice(before).some((line) => line.startsWith("error story stopped"))).toBe(true);
  });
});
