/**
 * The BullMQ adapter's two small stores in Redis, each against a real redis-server: the
 * per-installation slots (a sorted set per installation, scored by when each hold expires on
 * Redis's clock) and the quarantine hash. Holds are long, so nothing here expires on its own;
 * an expired hold is one the test writes with a score in the past. Waits poll Redis's clock.
 */
import { jest } from "@jest/globals";
import { InstallationSlots } from "../../../src/queue/bullmq/installation-slots.js";
import { QUARANTINE_LISTED, RedisQuarantine, storyJobIssues, type QuarantineRecord } from "../../../src/queue/bullmq/redis-quarantine.js";
import { schemas } from "../../../src/schema/index.js";
import { redisForFile } from "../../support/redis.js";
import { makeJob } from "../helpers.js";
import { until } from "../../support/poll.js";

jest.setTimeout(300_000);

const HOLD_MS = 600_000;
const server = redisForFile();

describe("BullMQ adapter: installation slots", () => {
  const key =
    (prefix: string) =>
    (installationId: number): string =>
      `${prefix}:slots:${installationId}`;

  it("without a limit lets every job run and writes nothing", async () => {
    const slots = new InstallationSlots(server.client, key("none"), undefined, HOLD_MS);
    for (const job of ["a", "b", "c"]) expect(await slots.acquire(1, job)).toBe(true);
    await slots.renew(1, "a");
    await slots.release(1, "b");
    expect(await server.client.keys("none:*")).toEqual([]);
    expect(await slots.holders(1)).toEqual([]);
  });

  it("holds at most `limit` jobs of one installation, each installation apart, and frees a slot on release", async () => {
    const slots = new InstallationSlots(server.client, key("two"), 2, HOLD_MS);
    expect(await slots.acquire(1, "a")).toBe(true);
    expect(await slots.acquire(1, "b")).toBe(true);
    expect(await slots.acquire(1, "c")).toBe(false);
    // A holder asking again keeps its slot.
    expect(await slots.acquire(1, "a")).toBe(true);
    expect(await slots.acquire(2, "c")).toBe(true);
    expect((await slots.holders(1)).sort()).toEqual(["a", "b"]);
    expect(await slots.holders(2)).toEqual(["c"]);
    await slots.release(1, "a");
    expect(await slots.holders(1)).toEqual(["b"]);
    expect(await slots.acquire(1, "c")).toBe(true);
    expect((await slots.holders(1)).sort()).toEqual(["b", "c"]);
    const ttl = await server.client.pttl("two:slots:1");
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(HOLD_MS);
  });

  it("renews a held slot from Redis's clock, and only a held one", async () => {
    const slots = new InstallationSlots(server.client, key("renew"), 1, HOLD_MS);
    expect(await slots.acquire(1, "a")).toBe(true);
    const first = Number(await server.client.zscore("renew:slots:1", "a"));
    await until("Redis's clock to move on", async () => (await server.now()) > first - HOLD_MS);
    await slots.renew(1, "a");
    expect(Number(await server.client.zscore("renew:slots:1", "a"))).toBeGreaterThan(first);
    await slots.renew(1, "stranger");
    expect(await server.client.zscore("renew:slots:1", "stranger")).toBeNull();
    expect(await slots.holders(1)).toEqual(["a"]);
  });

  it("counts neither in holders nor against the limit a hold that expired", async () => {
    const slots = new InstallationSlots(server.client, key("expired"), 1, HOLD_MS);
    const now = await server.now();
    await server.client.zadd("expired:slots:1", now - 1, "gone", now + HOLD_MS, "held");
    expect(await slots.holders(1)).toEqual(["held"]);
    await server.client.zadd("expired:slots:2", now - 1, "gone");
    expect(await slots.acquire(2, "next")).toBe(true);
    expect(await slots.holders(2)).toEqual(["next"]);
  });
});

describe("BullMQ adapter: the quarantine in Redis", () => {
  it("says why data is not a story job: every issue with its field, bounded", () => {
    const bad = { ...makeJob(1), kind: "x", installationId: "one" };
    const issues = schemas().issues("queue-story-job", bad);
    expect(issues.length).toBeGreaterThan(1);
    expect(storyJobIssues(bad)).toBe(issues.map((issue) => `${issue.path} ${issue.message}`).join("; "));
    expect(storyJobIssues(bad)).toMatch(/^\$\.kind must be one of .*; \$\.installationId must be integer$/);
    const noisy: Record<string, unknown> = { ...makeJob(1) };
    for (let index = 0; index < 200; index += 1) noisy[`field${index}`] = index;
    const long = storyJobIssues(noisy);
    expect(long).toHaveLength(2000);
    expect(long.startsWith("$.field0 is not an allowed key; $.field1 ")).toBe(true);
    expect(storyJobIssues(makeJob(1))).toBe("not a story job");
  });

  it("keeps a job's data whole with its reason, worker, time and story, and says where", async () => {
    const quarantine = new RedisQuarantine(server.client, "q1");
    const damaged = { ...makeJob(5), kind: "rebuild" };
    const before = Date.now();
    const kept = await quarantine.put({ jobId: "story-5", data: damaged, reason: "r".repeat(2500), worker: "host:1" });
    const story = { installationId: 1, owner: "acme", repo: "widgets", issueNumber: 5 };
    expect(kept).toEqual({ file: expect.stringMatching(/^story-5\.\d+$/), reason: "r".repeat(2000), kept: `the Redis hash q1, field ${kept.file}`, story });
    const stored = JSON.parse((await server.client.hget("q1", kept.file)) ?? "null") as QuarantineRecord;
    expect(stored).toEqual({
      entry: kept.file,
      jobId: "story-5",
      reason: "r".repeat(2000),
      worker: "host:1",
      at: expect.any(String),
      story,
      data: JSON.stringify(damaged),
    });
    const at = Date.parse(stored.at);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(kept.file).toBe(`story-5.${at}`);

    const elsewhere = new RedisQuarantine(server.client, "q2", "the operator's hash");
    const nothing = await elsewhere.put({ jobId: "j", data: undefined, reason: "empty", worker: "w" });
    expect(nothing).toEqual({ file: expect.stringMatching(/^j\.\d+$/), reason: "empty", kept: `the operator's hash, field ${nothing.file}` });
    const record = JSON.parse((await server.client.hget("q2", nothing.file)) ?? "null") as QuarantineRecord;
    expect(record.data).toBe("null");
    expect("story" in record).toBe(false);
  });

  it("refuses to store a record that breaks its schema, naming the job", async () => {
    const quarantine = new RedisQuarantine(server.client, "q3");
    await expect(quarantine.put({ jobId: "story-9", data: {}, reason: "why", worker: "" })).rejects.toThrow(/^quarantine record of story-9: \$\.worker /);
    expect(await server.client.exists("q3")).toBe(0);
  });

  it("lists the newest records first, leaves damaged ones out, and counts them all", async () => {
    const quarantine = new RedisQuarantine(server.client, "q4");
    const record = (index: number, at: string): QuarantineRecord => ({ entry: `j${index}.1`, jobId: `j${index}`, reason: "why", worker: "w", at, data: "{}" });
    const second = record(2, "2026-12-02T10:00:00.000Z");
    const first = record(1, "2026-12-01T10:00:00.000Z");
    const third = record(3, "2026-12-03T10:00:00.000Z");
    for (const one of [second, first, third]) await server.client.hset("q4", one.entry, JSON.stringify(one));
    await server.client.hset("q4", "torn", '{"entry":');
    await server.client.hset("q4", "foreign", JSON.stringify({ entry: "x" }));
    expect(await quarantine.list()).toStrictEqual({ records: [third, second, first], total: 5 });

    const many = new RedisQuarantine(server.client, "q5");
    const all = Array.from({ length: QUARANTINE_LISTED + 1 }, (_, index) => record(index, new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString()));
    for (const one of all) await server.client.hset("q5", one.entry, JSON.stringify(one));
    const listed = await many.list();
    expect(listed.total).toBe(QUARANTINE_LISTED + 1);
    expect(listed.records).toEqual(all.slice(1).reverse());
  });
});
