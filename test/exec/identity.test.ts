/**
 * A process's identity: its pid and when it started on this boot, so that a later process
 * with the same pid is not taken for it; and the ledger's records of running children.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec, identityOf, isRunning, ProcessLedger, reapOrphans, selfIdentity, UNKNOWN_START, type ExecResult } from "../../src/exec/index.js";
import { eventually } from "../support/poll.js";
import { makeTempDir, readPid, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/** A pid no process has: one that ran and was reaped. */
async function deadPid(): Promise<number> {
  let pid = 0;
  await exec(["true"], { cwd: makeTempDir(), onSpawn: (child) => (pid = child) });
  return pid;
}

interface Sleeper {
  pid: number;
  result: Promise<ExecResult>;
  /** Ends it (its group) and resolves with its result. */
  stop: () => Promise<ExecResult>;
}

/**
 * Starts a shell in its own group that prints a line each second until it is stopped. Once
 * nobody reads its output (this test process ended, for example by a mutation run's timeout,
 * before a `finally` could stop it), its next line fails and ends it: no sleeper outlives its
 * test process by more than a second.
 */
async function sleeper(): Promise<Sleeper> {
  const controller = new AbortController();
  let pid = 0;
  const result = exec(["sh", "-c", "while echo; do sleep 1; done"], {
    cwd: makeTempDir(),
    signal: controller.signal,
    killGraceMs: 300,
    onSpawn: (child) => (pid = child),
  });
  const stop = (): Promise<ExecResult> => (controller.abort(), result);
  try {
    await eventually("the sleeper to start", () => (pid !== 0 ? true : undefined), 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { pid, result, stop };
}

/** Runs `use` with `count` sleepers, and stops every one that started, whatever happens. */
async function withSleepers(count: number, use: (sleepers: Sleeper[]) => Promise<void>): Promise<void> {
  const started: Sleeper[] = [];
  try {
    for (let i = 0; i < count; i += 1) started.push(await sleeper());
    await use(started);
  } finally {
    for (const each of started) await each.stop();
  }
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
    await withSleepers(2, async ([first, second]) => {
      if (!first || !second) throw new Error("two sleepers");
      ledger.started(first.pid, "sh");
      ledger.started(second.pid, "sh");
      expect(readdirSync(dir).sort()).toEqual([`${first.pid}.json`, `${second.pid}.json`].sort());
      expect(JSON.parse(readFileSync(join(dir, `${first.pid}.json`), "utf8"))).toEqual({ child: identityOf(first.pid), owner: selfIdentity(), program: "sh" });
      ledger.ended(first.pid);
      expect(readdirSync(dir)).toEqual([`${second.pid}.json`]);
    });
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
    await withSleepers(2, async ([orphan, kept]) => {
      if (!orphan || !kept) throw new Error("two sleepers");
      const deadOwner = { pid: await deadPid(), startTime: "0:0" };
      const write = (name: string, text: string): void => writeFileSync(join(dir, name), text);
      write(`${orphan.pid}.json`, JSON.stringify({ child: identityOf(orphan.pid), owner: deadOwner, program: "sh" }));
      write(`${kept.pid}.json`, JSON.stringify({ child: identityOf(kept.pid), owner: selfIdentity(), program: "sh" }));
      write("torn.json", '{"child":{"pid":');
      // A child that is no longer the recorded process (the pid lives on, started at another time).
      write("stale.json", JSON.stringify({ child: { pid: kept.pid, startTime: "0:0" }, owner: deadOwner, program: "sh" }));
      write("notes.txt", "not a record");
      expect(reapOrphans(dir)).toEqual([{ pid: orphan.pid, program: "sh" }]);
      expect((await orphan.result).signal).toBe("SIGKILL");
      expect(readdirSync(dir).sort()).toEqual([`${kept.pid}.json`, "notes.txt"].sort());
      expect(identityOf(kept.pid)).toBeDefined();
    });
  });

  it("drops records that are not a child and an owner, without failing on any of them", async () => {
    const dir = makeTempDir();
    const dead = { pid: await deadPid(), startTime: "0:0" };
    const junk: Record<string, unknown> = {
      "null.json": null,
      "empty.json": {},
      "no-owner.json": { child: dead, program: "sh" },
      "owner-without-pid.json": { child: dead, owner: {}, program: "sh" },
      "pid-as-text.json": { child: { pid: String(dead.pid), startTime: "0:0" }, owner: dead, program: "sh" },
      "start-as-number.json": { child: { pid: dead.pid, startTime: 0 }, owner: dead, program: "sh" },
      // A live owner's records are kept, but only records: these are dropped all the same.
      "live-owner-pid-as-text.json": { child: { pid: String(dead.pid), startTime: "0:0" }, owner: selfIdentity(), program: "sh" },
      "live-owner-start-as-number.json": { child: { pid: dead.pid, startTime: 0 }, owner: selfIdentity(), program: "sh" },
    };
    for (const [name, record] of Object.entries(junk)) writeFileSync(join(dir, name), JSON.stringify(record));
    expect(reapOrphans(dir)).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("ends the orphan's whole group, not only its leader", async () => {
    const dir = makeTempDir();
    // A group of its own, outside exec's (setsid), so that nothing but reapOrphans ends it: the
    // leader and a member that runs until it is ended or this test process is gone. The script
    // waits for the leader, or exec would end setsid with its group before it left it.
    const member = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done`;
    const script = `setsid sh -c '${member} & echo $! > member.tmp; mv member.tmp member; echo $$ > leader.tmp; mv leader.tmp leader; wait' >/dev/null 2>&1 & while [ ! -f leader ]; do sleep 0.02; done`;
    const pids: number[] = [];
    try {
      await exec(["sh", "-c", script], { cwd: dir });
      await eventually("the group to start", () => (existsSync(join(dir, "leader")) ? true : undefined), 60_000);
      const [leader, inGroup] = [readPid(join(dir, "leader")), readPid(join(dir, "member"))];
      pids.push(leader, inGroup);
      writeFileSync(
        join(dir, `${leader}.json`),
        JSON.stringify({ child: identityOf(leader), owner: { pid: await deadPid(), startTime: "0:0" }, program: "sh" }),
      );
      expect(reapOrphans(dir)).toEqual([{ pid: leader, program: "sh" }]);
      await eventually("the leader and the group's member to end", () => (identityOf(inGroup) || identityOf(leader) ? undefined : true), 60_000);
    } finally {
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Gone, as it should be.
        }
      }
    }
  });
});
