/**
 * End to end: a `harness worker` whose Redis has gone away still stops on SIGTERM. A story
 * runs on the worker (its agent waits), Redis is stopped, and SIGTERM ends the story and the
 * process by itself (exit 0, no SIGKILL), saying that the job could not be handed back. The
 * only deadline is a generous hang guard.
 */
import { jest } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecResult } from "../../src/exec/index.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { startApp } from "./app-process.js";
import { addStoryRepo, harnessYml, labelNewIssue, sandboxGrant } from "./scenario.js";
import { startWorker, tearDown } from "./worker-process.js";
import { eventually } from "../support/poll.js";

jest.setTimeout(600_000);
const GUARD_MS = 180_000;

describe("harness worker with Redis gone", () => {
  let redis: RedisServer | undefined;
  let fake: FakeGitHub;
  let root: string;
  const processes: Array<{ stop: () => Promise<unknown> }> = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-e2e-redis-down-"));
    redis = await startRedis();
    fake = await startFakeGitHub();
  });
  afterAll(() => tearDown({ root, processes, fake, redis }));

  it("ends its running story and exits 0 on SIGTERM, saying the job is left to its lease", async () => {
    const markers = join(root, "markers");
    mkdirSync(markers);
    const env = { HARNESS_QUEUE: redis?.url ?? "", HARNESS_LEASE_MS: "10000", ...sandboxGrant(markers) };
    await addStoryRepo(fake, "stranded", harnessYml({ markers }));
    const app = await startApp({ fake, home: join(root, "home-serve"), workDir: root, env });
    processes.push(app);
    const worker = await startWorker({ fake, name: "w1", home: join(root, "home-w1"), workDir: root, env });
    processes.push(worker);
    await labelNewIssue(fake, app, "stranded", "Stranded story");
    await eventually("the implementer running on the worker", () => (existsSync(join(markers, "started")) ? true : undefined), GUARD_MS);
    await redis?.stop();
    redis = undefined;
    process.kill(worker.pid, "SIGTERM");
    let ended: ExecResult | undefined;
    void worker.done.then((result) => {
      ended = result;
    });
    const result = await eventually("the worker to exit after SIGTERM", () => ended, GUARD_MS).catch(async (error: unknown) => {
      throw new Error(`${String(error)}; its log ends:\n${(await worker.log()).slice(-4000)}`);
    });
    // Exited by itself: the helper's SIGKILL was never sent (that only follows its own stop()).
    expect([result.exitCode, result.signal]).toEqual([0, null]);
    const log = await worker.log();
    expect(log).toContain("harness worker: SIGTERM, stopping");
    // Either the job's own hand-back failed, or close gave up on Redis first: both leave it to its lease, and say so.
    expect(log).toMatch(
      /could not be handed back .*another worker takes it once its lease expires|jobs not handed back are taken by another worker once their lease \(\d+ ms\) expires/,
    );
  });
});
