import { randomInt } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { exec, ProcessLedger, reapOrphans, runInStepScope, type ExecResult } from "../../src/exec/index.js";
import { reapScratch } from "../../src/workspace/index.js";
import { makeTempDir, processWithTag, removeTempDirs } from "../support/tmp.js";
import { until } from "../support/poll.js";

const CHILD = resolve("test/exec/ledger-child.ts");

afterAll(() => removeTempDirs());

describe("step scope and process ledger", () => {
  it("ends a process through the scope's signal without the call naming it, and records it only while it runs", async () => {
    const dir = makeTempDir();
    const ledger = new ProcessLedger(join(dir, "ledger"));
    const stop = new AbortController();
    let pid = 0;
    const running = runInStepScope({ signal: stop.signal, ledger }, () =>
      exec(["sleep", "300"], { cwd: dir, onSpawn: (child) => (pid = child), timeoutMs: 120_000 }),
    );
    await until("the process recorded in the ledger", () => pid !== 0 && existsSync(join(dir, "ledger", `${pid}.json`)), 60_000);
    stop.abort();
    const result = await running;
    expect(result).toMatchObject({ aborted: true, signal: "SIGTERM" });
    expect(readdirSync(join(dir, "ledger"))).toEqual([]);
  });

  it("records a child in a ledger folder removed after the first record (it is made again)", async () => {
    const dir = makeTempDir();
    const ledger = new ProcessLedger(join(dir, "ledger"));
    ledger.started(process.pid, "first");
    expect(readdirSync(join(dir, "ledger"))).toEqual([`${process.pid}.json`]);
    rmSync(join(dir, "ledger"), { recursive: true });
    ledger.started(process.pid, "second");
    expect(JSON.parse(readFileSync(join(dir, "ledger", `${process.pid}.json`), "utf8"))).toMatchObject({ child: { pid: process.pid }, program: "second" });
    ledger.ended(process.pid);
    expect(readdirSync(join(dir, "ledger"))).toEqual([]);
  });

  it("after the owner is killed with SIGKILL, finds its orphan from the record made at start and ends it", async () => {
    const dir = makeTempDir();
    // A sleep of its own (seconds with a fraction unique to this run): the process is looked for
    // on the whole host, where another run's leftover must not pass or fail this test.
    const tag = `3131.${randomInt(1_000_000_000)}`;
    let childPid = 0;
    const child: Promise<ExecResult> = exec([process.execPath, "--import", "tsx", CHILD, dir, tag], {
      cwd: process.cwd(),
      timeoutMs: 120_000,
      onSpawn: (pid) => (childPid = pid),
    });
    await until("the child spawned", () => existsSync(join(dir, "spawned")), 60_000);
    // Its own group, not the child's: kill -9 of the App leaves it running.
    process.kill(childPid, "SIGKILL");
    await child;
    expect(processWithTag(`sleep\0${tag}`)).toBe(true);
    // A live owner's records are left alone (this process has none); the dead one's orphan is ended.
    const reaped = reapOrphans(join(dir, "ledger"));
    expect(reaped).toEqual([{ pid: expect.any(Number), program: "sleep" }]);
    await until("the tagged sleep to end", () => !processWithTag(`sleep\0${tag}`), 60_000);
    expect(readdirSync(join(dir, "ledger"))).toEqual([]);
  });

  it("removes the clean-clone scratch folders of dead owners and keeps a live owner's", async () => {
    const root = makeTempDir();
    const dead = join(root, "harness-clean-clone-dead01");
    const live = join(root, "harness-clean-clone-live01");
    for (const dir of [dead, live]) mkdirSync(join(dir, "repo"), { recursive: true });
    writeFileSync(`${dead}.owner`, JSON.stringify({ pid: 1, startTime: "not-pid-1s-start" }));
    writeFileSync(`${live}.owner`, JSON.stringify({ pid: process.pid, startTime: "unknown" }));
    expect(await reapScratch(root)).toEqual([dead]);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(`${dead}.owner`)).toBe(false);
    expect(existsSync(live)).toBe(true);
  });
});
