/**
 * Status over Redis: each worker publishes what only its own disk holds (its outbox's undelivered
 * writes, its quarantined job files) with the jobs it runs, and `harness status`, the JSON
 * endpoint and the page read the whole queue and every worker's report from Redis. Against a
 * real redis-server; waits poll for conditions under generous hang guards.
 */
import { jest } from "@jest/globals";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli.js";
import { BullmqQueue } from "../../src/queue/bullmq/index.js";
import { Journal, JOURNAL_FILE, loadWorkflow, runStartedEvent } from "../../src/pipeline/index.js";
import { collectLocalWork, collectRuns, collectStatus, renderStatusPage, type HarnessStatus, type StatusReport } from "../../src/status/index.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { deferred, makeJob } from "../queue/helpers.js";
import { until } from "../support/poll.js";

jest.setTimeout(300_000);

/** Short renewals so a stopped worker shows as not live quickly; the lease itself stays roomy. */
const TIMING = { reportEveryMs: 200, lease: { lockTtlMs: 10_000, heartbeatMs: 1000 } };

let redis: RedisServer;
const opened: BullmqQueue[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const queue of opened.splice(0)) await queue.close({ abortRunning: true });
  await redis?.stop();
  removeTempDirs();
});

/** A worker's data directory holding one given-up GitHub write of `issue` and one quarantined job file naming `issue + 100`. */
function workerHome(issue: number): string {
  const home = makeTempDir("harness-shared-status-");
  mkdirSync(join(home, "queue", "quarantine"), { recursive: true });
  writeFileSync(
    join(home, "queue", "quarantine", `00170000000000${issue}-000001-0000000${issue}.json`),
    JSON.stringify({ job: { installationId: 1, repository: { owner: "acme", name: "widgets" }, issue: { number: issue + 100 } } }),
  );
  mkdirSync(join(home, "outbox"));
  const now = new Date().toISOString();
  const id = `00170000000000${issue}-000001-0000000a`;
  writeFileSync(
    join(home, "outbox", `${id}.json`),
    JSON.stringify({
      id,
      story: { installationId: 1, owner: "acme", repo: "widgets", issueNumber: issue },
      slot: "status-comment",
      write: { kind: "status-comment", issueNumber: issue, body: "x" },
      state: "undeliverable",
      attempts: 3,
      lastError: `404: Not Found (${issue})`,
      writer: { pid: 4242, startTime: "b:1" },
      createdAt: now,
      updatedAt: now,
    }),
  );
  return home;
}

async function openWorker(prefix: string, home: string, gate: Promise<void>): Promise<BullmqQueue> {
  const queue = await BullmqQueue.open({ url: redis.url, prefix, ...TIMING });
  opened.push(queue);
  queue.shareLocalWork({ home, collect: () => collectLocalWork(home) });
  queue.start(async () => gate);
  return queue;
}

async function statusCommand(home: string, extra: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await main(["status", ...(extra.json === "no" ? [] : ["--json"])], {
    stdout: (text) => (out += text),
    stderr: (text) => (out += text),
    cwd: process.cwd(),
    env: { HARNESS_HOME: home, HARNESS_QUEUE: redis.url },
  });
  return { code, out };
}

/** A story run in `home`'s runs/: `running` in its implementer (with a log line), or completed. */
function writeRun(home: string, issue: number, title: string, state: "running" | "completed"): void {
  const dir = join(home, "runs", String(issue), `2026-12-01T00-00-0${issue}Z`);
  const journal = new Journal(join(dir, JOURNAL_FILE));
  const at = (second: number): string => new Date(Date.now() - 60_000 + second * 1000).toISOString();
  journal.append({
    ...runStartedEvent({ story: { id: `acme/widgets#${issue}`, title }, runId: `run-${issue}`, workflow: loadWorkflow(), readmission: false }),
    at: at(issue),
  });
  journal.append({ kind: "stage.started", taskId: "task-1", stage: "implementer", attempt: 1, at: at(issue + 1) });
  mkdirSync(join(dir, "logs"), { recursive: true });
  writeFileSync(join(dir, "logs", "implementer.log"), `writing the feature of #${issue}\n`);
  if (state === "completed") journal.append({ kind: "story.completed", branch: `harness/story-${issue}`, commit: "a".repeat(40), at: at(issue + 2) });
}

describe("status over Redis", () => {
  it("shows every worker's running job, undelivered writes and quarantined files, and the queued jobs, in harness status, the JSON and the page", async () => {
    // The CLI reads the default key prefix; this test owns it on its own server.
    const prefix = "harness";
    const gate = deferred();
    const homes = [workerHome(1), workerHome(2)];
    const workers = [await openWorker(prefix, homes[0] ?? "", gate.promise), await openWorker(prefix, homes[1] ?? "", gate.promise)];
    const serve = await BullmqQueue.open({ url: redis.url, prefix });
    opened.push(serve);
    for (const issue of [11, 12, 13]) await serve.enqueue(makeJob(issue, `d-${issue}`));
    const operatorHome = makeTempDir("harness-shared-status-operator-");
    let status: HarnessStatus | undefined;
    await until("two running on two workers and both reports naming their job", async () => {
      const { code, out } = await statusCommand(operatorHome);
      if (code !== 0) throw new Error(out);
      status = JSON.parse(out) as HarnessStatus;
      // Polled until both renewed in time: a worker starved of CPU on a loaded machine may show not live for a moment.
      return (
        status.running.length === 2 &&
        status.running.every((job) => job.worker !== undefined) &&
        (status.workers ?? []).every((worker) => worker.running === 1 && worker.live)
      );
    });
    if (!status) throw new Error("no status");
    const ids = workers.map((worker) => worker.reports.self);
    expect(status.workers?.map((worker) => [worker.worker, worker.live, worker.home]).sort()).toEqual(
      [
        [ids[0], true, homes[0]],
        [ids[1], true, homes[1]],
      ].sort(),
    );
    expect(new Set(status.running.map((job) => job.worker))).toEqual(new Set(ids));
    expect(status.queued).toHaveLength(1);
    expect([...status.running, ...status.queued].map((job) => job.story).sort()).toEqual(["acme/widgets#11", "acme/widgets#12", "acme/widgets#13"]);
    expect(status.undelivered.map((entry) => [entry.story, entry.state, entry.lastError, entry.worker]).sort()).toEqual([
      ["acme/widgets#1", "undeliverable", "404: Not Found (1)", ids[0]],
      ["acme/widgets#2", "undeliverable", "404: Not Found (2)", ids[1]],
    ]);
    expect(status.quarantined.map((entry) => [entry.story, entry.worker]).sort()).toEqual([
      ["acme/widgets#101", ids[0]],
      ["acme/widgets#102", ids[1]],
    ]);

    const text = await statusCommand(operatorHome, { json: "no" });
    expect(text.out).toContain("Workers (2), reporting through Redis");
    expect(text.out).toContain(`on ${ids[0]}`);
    expect(text.out).toContain("Undelivered GitHub writes (2)");

    // The App's endpoint and page read the same through the queue it holds.
    const report = await collectStatus({ home: operatorHome, jobs: await serve.snapshot(), queue: serve });
    expect(report.undelivered).toHaveLength(2);
    expect(report.workers).toHaveLength(2);
    const page = renderStatusPage(report, { webBase: "https://github.com" });
    expect(page).toContain("<h2>Workers (2)</h2>");
    expect(page).toContain(`<code>${ids[1]}</code>`);
    gate.resolve();
    await until("the queue drained", async () => (await serve.snapshot()).length === 0);
  });

  it("keeps the report of a worker that stopped with work left on its disk, not live, until it runs again; withdraws one that left nothing", async () => {
    const prefix = "stopping";
    const leftHome = workerHome(3);
    const leftWork = await openWorker(prefix, leftHome, Promise.resolve());
    const cleanHome = makeTempDir("harness-shared-status-clean-");
    const clean = await openWorker(prefix, cleanHome, Promise.resolve());
    const reader = await BullmqQueue.open({ url: redis.url, prefix, ...TIMING });
    opened.push(reader);
    await until("both reports", async () => (await reader.workerReports()).length === 2);
    for (const queue of [leftWork, clean]) {
      opened.splice(opened.indexOf(queue), 1);
      await queue.close();
    }
    await until("the stopped worker shown not live", async () => {
      const reports = await reader.workerReports();
      return reports.length === 1 && reports[0]?.live === false;
    });
    const [left] = await reader.workerReports();
    expect(left).toMatchObject({ worker: leftWork.reports.self, running: [], undelivered: [expect.objectContaining({ story: "acme/widgets#3" })] });
    const status = await collectStatus({ home: cleanHome, jobs: [], queue: reader });
    expect(status.workers).toEqual([expect.objectContaining({ worker: leftWork.reports.self, live: false })]);
    expect(status.undelivered).toEqual([expect.objectContaining({ story: "acme/widgets#3", worker: leftWork.reports.self })]);
    // A worker started again on that data directory takes its report over.
    const again = await openWorker(prefix, leftHome, Promise.resolve());
    expect(again.reports.self).toBe(leftWork.reports.self);
    await until("the report live again", async () => {
      const reports = await reader.workerReports();
      return reports.length === 1 && reports[0]?.live === true;
    });
  });

  it("shows the workers' running and ended story runs on the App's page, each naming its worker, none of them on the App's own disk", async () => {
    const prefix = "runs";
    const homes = [makeTempDir("harness-shared-runs-a-"), makeTempDir("harness-shared-runs-b-")];
    writeRun(homes[0] ?? "", 21, "Greet the user", "running");
    writeRun(homes[1] ?? "", 22, "Say goodbye", "completed");
    const workers: BullmqQueue[] = [];
    for (const home of homes) {
      const queue = await BullmqQueue.open({ url: redis.url, prefix, ...TIMING });
      opened.push(queue);
      queue.shareLocalWork({ home, collect: async () => ({ ...(await collectLocalWork(home)), runs: collectRuns(home, []) }) });
      workers.push(queue);
    }
    const serve = await BullmqQueue.open({ url: redis.url, prefix, ...TIMING });
    opened.push(serve);
    const serveHome = makeTempDir("harness-shared-runs-serve-");
    let report: StatusReport | undefined;
    await until("both workers' runs in their reports", async () => {
      report = await collectStatus({ home: serveHome, jobs: await serve.snapshot(), queue: serve });
      return report.runs.length === 2;
    });
    if (!report) throw new Error("no report");
    const ids = workers.map((worker) => worker.reports.self);
    expect(report.runs.map((run) => [run.story, run.title, run.outcome, run.stage, run.worker])).toEqual([
      ["22", "Say goodbye", "completed", "implementer", ids[1]],
      ["21", "Greet the user", "running", "implementer", ids[0]],
    ]);
    expect(report.runs[1]?.liveTail).toEqual({ file: "logs/implementer.log", text: "writing the feature of #21\n" });
    const page = renderStatusPage(report, { webBase: "https://github.com" });
    const section = (title: string): string => page.slice(page.indexOf(`<h2>${title}`), page.indexOf("<h2>", page.indexOf(`<h2>${title}`) + 4));
    expect(section("Running (1)")).toContain("Greet the user");
    expect(section("Running (1)")).toContain(`<code>${ids[0] ?? ""}</code>`);
    expect(section("Recent outcomes (1)")).toContain("Say goodbye");
    expect(section("Recent outcomes (1)")).toContain(`<code>${ids[1] ?? ""}</code>`);
    expect(section("Live log")).toContain(`on <code>${ids[0] ?? ""}</code>`);
    expect(section("Live log")).toContain("writing the feature of #21");
  });

  it("says where Redis is when harness status cannot reach it", async () => {
    let out = "";
    const code = await main(["status"], {
      stdout: (text) => (out += text),
      stderr: (text) => (out += text),
      cwd: process.cwd(),
      env: { HARNESS_HOME: makeTempDir(), HARNESS_QUEUE: "redis://:pw@127.0.0.1:1/0" },
    });
    expect(code).toBe(2);
    expect(out).toMatch(/cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0/);
    expect(out).not.toContain("pw@");
  });
});
