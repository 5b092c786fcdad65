/**
 * A process's identity: its pid and when it started on this boot, so that a later process
 * with the same pid is not taken for it; and the ledger's records of running children.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec, identityOf, isRunning, ProcessLedger, reapOrphans, selfIdentity, UNKNOWN_START, type ExecResult } from "../../src/exec/index.js";
import { eventually } from "../support/poll.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/** A pid no process has: one that ran and was reaped. */
async function deadPid(): Promise<number> {
  let pid = 0;
  await exec(["true"], { cwd: makeTempDir(), onSpawn: (child) => (pid = child) });
  return pid;
}

/** Starts `sleep 600` in its own group; `stop()` ends it and resolves with its result. */
async function sleeper(): Promise<{ pid: number; stop: () => Promise<ExecResult>; result: Promise<ExecResult> }> {
  const controller = new AbortController();
  let pid = 0;
  const result = exec(["sleep", "600"], { cwd: makeTempDir(), signal: controller.signal, killGraceMs: 300, onSpawn: (child) => (pid = child) });
  await eventually("the sleeper to start", () => (pid !== 0 && identityOf(pid) ? true : undefined), 60_000);
  return { pid, result, stop: () => (controller.abort(), result) };
}

describe("identityOf and isRunning", () => {
  it("names this process by its pid, the boot and its start time in clock ticks", () => {
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim();
    const stat = readFileSync("/proc/self/stat", "latin1");
    const startTicks = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    expect(bootId).toMatch(/^[0-9a-f-]{36}$/);
    expect(identityOf(process.pid)).toEqual({ pid: process.pid, startTime: `${bootId}:${startTicks}` });
    expect(selfIdentity()).toEqual(identityOf(process.pid));
    expect(isRunning(selfIdentity())).toBe(true);
  });

  it("tells a later life of the pid apart, unless a start time is unknown", () => {
    const self = selfIdentity();
    expect(isRunning({ pid: self.pid, startTime: `${self.startTime}0` })).toBe(false);
    expect(isRunning({ pid: self.pid, startTime: UNKNOWN_START })).toBe(true);
  });

  it("knows no process by a pid that is not a positive integer, or that is gone", async () => {
    for (const pid of [0, -1, 1.5, Number.NaN]) {
      expect(identityOf(pid)).toBeUndefined();
      expect(isRunning({ pid, startTime: UNKNOWN_START })).toBe(false);
    }
    const gone = await deadPid();
    expect(identityOf(gone)).toBeUndefined();
    expect(isRunning({ pid: gone, startTime: UNKNOWN_START })).toBe(false);
  });
});

describe("ProcessLedger", () => {
  it("records each running child with its owner and program, and forgets it", async () => {
    const dir = join(makeTempDir(), "ledger");
    const ledger = new ProcessLedger(dir);
    const first = await sleeper();
    const second = await sleeper();
    try {
      ledger.started(first.pid, "sleep");
      ledger.started(second.pid, "sleep");
      expect(readdirSync(dir).sort()).toEqual([`${first.pid}.json`, `${second.pid}.json`].sort());
      expect(JSON.parse(readFileSync(join(dir, `${first.pid}.json`), "utf8"))).toEqual({ child: identityOf(first.pid), owner: selfIdentity(), program: "sleep" });
      ledger.ended(first.pid);
      expect(readdirSync(dir)).toEqual([`${second.pid}.json`]);
    } finally {
      await first.stop();
      await second.stop();
    }
  });

  it("records nothing for a child that is already gone, and forgetting one never recorded is fine", async () => {
    const dir = join(makeTempDir(), "ledger");
    const ledger = new ProcessLedger(dir);
    const gone = await deadPid();
    ledger.started(gone, "true");
    expect(existsSync(join(dir, `${gone}.json`))).toBe(false);
    expect(() => ledger.ended(gone)).not.toThrow();
  });
});

describe("reapOrphans", () => {
  it("finds nothing in a ledger folder that does not exist", () => {
    expect(reapOrphans(join(makeTempDir(), "never-made"))).toEqual([]);
  });

  it("ends a running child of a dead owner, keeps a live owner's record, and drops torn and stale ones", async () => {
    const dir = makeTempDir();
    const orphan = await sleeper();
    const kept = await sleeper();
    try {
      const deadOwner = { pid: await deadPid(), startTime: "0:0" };
      const write = (name: string, text: string): void => writeFileSync(join(dir, name), text);
      write(`${orphan.pid}.json`, JSON.stringify({ child: identityOf(orphan.pid), owner: deadOwner, program: "sleep" }));
      write(`${kept.pid}.json`, JSON.stringify({ child: identityOf(kept.pid), owner: selfIdentity(), program: "sleep" }));
      write("torn.json", '{"child":{"pid":');
      // A child that is no longer the recorded process (the pid lives on, started at another time).
      write("stale.json", JSON.stringify({ child: { pid: kept.pid, startTime: "0:0" }, owner: deadOwner, program: "sleep" }));
      write("notes.txt", "not a record");
      expect(reapOrphans(dir)).toEqual([{ pid: orphan.pid, program: "sleep" }]);
      expect((await orphan.result).signal).toBe("SIGKILL");
      expect(readdirSync(dir).sort()).toEqual([`${kept.pid}.json`, "notes.txt"].sort());
      expect(identityOf(kept.pid)).toBeDefined();
    } finally {
      await orphan.stop();
      await kept.stop();
    }
  });
});
