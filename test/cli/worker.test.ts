import { join } from "node:path";
import { readQueueSettings } from "../../src/cli/queue-settings.js";
import { runCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

async function harness(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const { code, stdout, stderr } = await runCli(args, makeTempDir("harness-worker-cwd-"), env);
  return { code, out: stdout, err: stderr };
}

const read = (env: NodeJS.ProcessEnv): ReturnType<typeof readQueueSettings> => readQueueSettings(env, { harnessHome: "/data", concurrency: 2, usage: "u" });

describe("queue settings (HARNESS_QUEUE, HARNESS_WORKER, HARNESS_INSTALLATION_SLOTS, HARNESS_LEASE_MS)", () => {
  it("keeps the embedded queue when HARNESS_QUEUE is unset, and serve runs the stories", () => {
    expect(read({})).toEqual({ queue: { kind: "embedded", dir: join("/data", "queue"), concurrency: 2 }, serveRunsJobs: true });
    expect(read({ HARNESS_INSTALLATION_SLOTS: "3" }).queue).toMatchObject({ kind: "embedded", installationSlots: 3 });
  });

  it("selects Redis with HARNESS_QUEUE; serve then only takes webhooks unless HARNESS_WORKER=on", () => {
    expect(read({ HARNESS_QUEUE: "redis://cache:6379/0" })).toEqual({
      queue: { kind: "redis", url: "redis://cache:6379/0", concurrency: 2 },
      serveRunsJobs: false,
    });
    expect(read({ HARNESS_QUEUE: "redis://cache:6379/0", HARNESS_WORKER: "on" }).serveRunsJobs).toBe(true);
    expect(read({ HARNESS_QUEUE: "redis://cache", HARNESS_LEASE_MS: "3000" }).queue).toMatchObject({ lease: { lockTtlMs: 3000, heartbeatMs: 1000 } });
  });

  it("names the variable that is wrong", () => {
    expect(() => read({ HARNESS_WORKER: "yes" })).toThrow("HARNESS_WORKER must be 'on' or 'off', got 'yes'");
    expect(() => read({ HARNESS_WORKER: "off" })).toThrow(/HARNESS_WORKER=off needs HARNESS_QUEUE/);
    expect(() => read({ HARNESS_INSTALLATION_SLOTS: "0" })).toThrow(/HARNESS_INSTALLATION_SLOTS must be a positive integer/);
    expect(() => read({ HARNESS_QUEUE: "http://cache" })).toThrow(/HARNESS_QUEUE must start with redis:\/\//);
    expect(() => read({ HARNESS_QUEUE: "redis://cache", HARNESS_LEASE_MS: "10" })).toThrow(/HARNESS_LEASE_MS must be at least 1000/);
    expect(() => read({ HARNESS_LEASE_MS: "3000" })).toThrow(/HARNESS_LEASE_MS applies to HARNESS_QUEUE/);
  });
});

describe("harness worker", () => {
  it("answers --help with its variables", async () => {
    const result = await harness({}, "worker", "--help");
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Usage: harness worker/);
    expect(result.out).toMatch(/HARNESS_QUEUE=redis:\/\/host:6379\/0 is\s+required/);
  });

  it("exits 2 without HARNESS_QUEUE: the embedded queue's stories run in serve", async () => {
    const result = await harness({ HARNESS_HOME: makeTempDir("harness-worker-home-") }, "worker");
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/HARNESS_QUEUE is not set/);
  });

  it("exits 2 saying where Redis is, password hidden, when it cannot reach it", async () => {
    const env = { HARNESS_HOME: makeTempDir("harness-worker-home-"), HARNESS_QUEUE: "redis://:hunter2@127.0.0.1:1/0", APP_ID: "1", PRIVATE_KEY: "k" };
    const result = await harness(env, "worker");
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0/);
    expect(result.err).not.toContain("hunter2");
  });
});
