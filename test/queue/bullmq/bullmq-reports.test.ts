/**
 * Each worker's report in Redis (src/queue/bullmq/worker-reports.ts), against a real
 * redis-server: what a report carries and how it is bounded, its key's lifetime, its withdrawal,
 * and how the list reads it back (oldest first, live or not by Redis's clock, damaged or
 * expired reports left out). A report that is not live is one the test indexes with a score in
 * the past; nothing waits on time.
 */
import { jest } from "@jest/globals";
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { DEFAULT_REPORT_MEMORY_MS, REPORT_ENTRIES, REPORT_RUNS, WorkerReports } from "../../../src/queue/bullmq/worker-reports.js";
import type { LocalWork, ReportedRun } from "../../../src/status/index.js";
import { redisForFile } from "../../support/redis.js";

jest.setTimeout(300_000);

const STALE_MS = 60_000;
const server = redisForFile();

function reports(prefix: string, memoryMs?: number): WorkerReports {
  return new WorkerReports(server.client, { index: `${prefix}:workers`, report: (worker) => `${prefix}:worker:${worker}` }, STALE_MS, memoryMs);
}

function run(index: number, extra: Partial<ReportedRun> = {}): ReportedRun {
  return {
    story: String(index),
    runId: `run-${index}`,
    title: `t${index}`,
    outcome: "running",
    attempt: 1,
    maxAttempts: 3,
    startedAt: "2026-12-01T00:00:00.000Z",
    updatedAt: "2026-12-01T00:00:01.000Z",
    tasks: [],
    ...extra,
  };
}

const NOTHING: LocalWork = { quarantined: [], undelivered: [] };

describe("BullMQ adapter: worker reports", () => {
  it("names a worker by its host and process, or by the data directory it claims", () => {
    const own = reports("names");
    expect(own.self).toBe(`${hostname()}:${process.pid}`);
    own.claim("/srv/harness");
    expect(own.self).toBe(`${hostname()}:${createHash("sha256").update("/srv/harness").digest("hex").slice(0, 12)}`);
    const other = reports("names");
    other.claim("/srv/other");
    expect(other.self).not.toBe(own.self);
  });

  it("carries the worker's local work, bounded, and keeps it for the report's memory", async () => {
    const own = reports("bounds");
    const quarantined = Array.from({ length: REPORT_ENTRIES + 50 }, (_, index) => ({ file: `q${index}.json`, story: `acme/widgets#${index}` }));
    const undelivered = Array.from({ length: REPORT_ENTRIES + 20 }, (_, index) => ({
      story: `acme/widgets#${index}`,
      slot: "status-comment",
      kind: "status-comment",
      state: "pending" as const,
      attempts: index,
      ...(index % 2 === 0 ? { lastError: `${index}:${"e".repeat(500)}` } : {}),
    }));
    const tasks = Array.from({ length: 60 }, (_, index) => ({
      id: `task-${index}`,
      title: `${index}${"t".repeat(400)}`,
      wave: 1,
      state: "running",
      attempt: 1,
    }));
    const runs = [
      run(0, {
        title: "T".repeat(400),
        detail: "D".repeat(400),
        tasks,
        liveTail: { file: `/${"f".repeat(1200)}`, text: `${"x".repeat(1000)}${"y".repeat(4096)}` },
      }),
      ...Array.from({ length: REPORT_RUNS + 4 }, (_, index) => run(index + 1)),
    ] as ReportedRun[];
    const running = Array.from({ length: 1100 }, (_, index) => `story-${index}`);
    const home = `/${"h".repeat(5000)}`;
    const report = await own.publish({ quarantined, undelivered, runs }, running, home);
    expect(report).toEqual({
      worker: own.self,
      host: hostname(),
      pid: process.pid,
      home: home.slice(0, 4096),
      running: running.slice(0, 1000),
      quarantined: quarantined.slice(0, REPORT_ENTRIES),
      undelivered: undelivered.slice(0, REPORT_ENTRIES).map((entry) => (entry.lastError ? { ...entry, lastError: entry.lastError.slice(0, 300) } : entry)),
      runs: [
        {
          ...runs[0],
          title: "T".repeat(300),
          detail: "D".repeat(300),
          tasks: tasks.slice(0, 50).map((task) => ({ ...task, title: task.title.slice(0, 300) })),
          liveTail: { file: `/${"f".repeat(999)}`, text: "y".repeat(4096) },
        },
        ...runs.slice(1, REPORT_RUNS),
      ],
      omitted: { quarantined: 50, undelivered: 20 },
      at: expect.any(String),
    });
    expect(report.undelivered[1]).not.toHaveProperty("lastError");
    expect(report.runs?.[1]).not.toHaveProperty("detail");
    expect(report.runs?.[1]).not.toHaveProperty("liveTail");
    expect(Math.abs(Date.parse(report.at) - Date.now())).toBeLessThan(3_600_000);
    expect(JSON.parse((await server.client.get(`bounds:worker:${own.self}`)) ?? "null")).toEqual(report);
    const ttl = await server.client.pttl(`bounds:worker:${own.self}`);
    expect(ttl).toBeGreaterThan(DEFAULT_REPORT_MEMORY_MS - 3_600_000);
    expect(ttl).toBeLessThanOrEqual(DEFAULT_REPORT_MEMORY_MS);

    const small = await reports("small", 120_000).publish(NOTHING, [], "/home");
    expect(small).not.toHaveProperty("runs");
    expect(small.omitted).toEqual({ quarantined: 0, undelivered: 0 });
    expect(await server.client.pttl(`small:worker:${small.worker}`)).toBeLessThanOrEqual(120_000);
  });

  it("refuses to publish a report that breaks its schema, naming the worker", async () => {
    const own = reports("refused");
    await expect(own.publish({ quarantined: [{ file: "" }], undelivered: [] }, [], "/home")).rejects.toThrow(
      new RegExp(`^worker report of ${own.self}: \\$\\.quarantined\\[0\\]\\.file `),
    );
    expect(await server.client.exists("refused:workers")).toBe(0);
  });

  it("lists every report oldest first, live by Redis's clock, and leaves out expired and damaged ones", async () => {
    const list = reports("list");
    expect(await list.list()).toEqual([]);
    const first = reports("list");
    first.claim("/first");
    const second = reports("list");
    second.claim("/second");
    const stale = reports("list");
    stale.claim("/stale");
    const staleReport = await stale.publish(NOTHING, ["story-3"], "/stale");
    const firstReport = await first.publish(NOTHING, ["story-1"], "/first");
    const secondReport = await second.publish({ quarantined: [{ file: "q.json" }], undelivered: [] }, [], "/second");
    const now = await server.now();
    // Renewed just over STALE_MS ago, and earlier than the others.
    await server.client.zadd("list:workers", now - STALE_MS - 1, stale.self);
    await server.client.zadd("list:workers", now - 5, first.self, now, second.self);
    await server.client.zadd("list:workers", now - 3, "gone-worker", now - 2, "torn-worker");
    await server.client.set("list:worker:torn-worker", '{"worker":');
    const listed = await list.list();
    expect(listed).toEqual([
      { ...staleReport, at: new Date(now - STALE_MS - 1).toISOString(), live: false },
      { ...firstReport, at: new Date(now - 5).toISOString(), live: true },
      { ...secondReport, at: new Date(now).toISOString(), live: true },
    ]);
    await first.withdraw();
    expect(await server.client.zscore("list:workers", first.self)).toBeNull();
    expect(await server.client.exists(`list:worker:${first.self}`)).toBe(0);
    expect((await list.list()).map((report) => report.worker)).toEqual([stale.self, second.self]);
  });

  it("forgets in the index a worker not renewed for the report's memory, on the next publish", async () => {
    const own = reports("memory", 600_000);
    const now = await server.now();
    await server.client.zadd("memory:workers", now - 600_001, "long-gone", now - 1000, "recent");
    await own.publish(NOTHING, [], "/home");
    expect((await server.client.zrange("memory:workers", 0, "-1")).sort()).toEqual([own.self, "recent"].sort());
  });
});
