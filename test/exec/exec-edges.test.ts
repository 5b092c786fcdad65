/**
 * exec at its edges: an abort that came before the start, stdin left empty, arguments node
 * refuses, a program that may not run, a process that left the group with its pipes, a group
 * whose only member is a zombie, and the one definition of a passing run.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec, groupAlive, identityOf, succeeded, terminateGroup } from "../../src/exec/index.js";
import { eventually } from "../support/poll.js";
import { isRunning, makeTempDir, readPid, removeTempDirs } from "../support/tmp.js";

/** Pid files of the stragglers a test left outside the child's group, which exec never ends. */
const stragglers: string[] = [];
// After each test, also one that failed on its deadline while exec still waited.
afterEach(() => {
  for (const pidFile of stragglers.splice(0)) {
    try {
      process.kill(readPid(pidFile), "SIGKILL");
    } catch {
      // Never written, or already gone.
    }
  }
});
afterAll(removeTempDirs);

describe("succeeded", () => {
  it("is exit code 0 within the time, nothing else", () => {
    expect(succeeded({ exitCode: 0 })).toBe(true);
    expect(succeeded({ exitCode: 0, timedOut: false })).toBe(true);
    expect(succeeded({ exitCode: 0, timedOut: true })).toBe(false);
    expect(succeeded({ exitCode: 1, timedOut: false })).toBe(false);
    // A run its caller stopped did not pass, even when it exited 0 before the stop reached it.
    expect(succeeded({ exitCode: 0, aborted: true })).toBe(false);
    expect(succeeded({ exitCode: 0, aborted: false })).toBe(true);
    expect(succeeded({ exitCode: null })).toBe(false);
    expect(succeeded({})).toBe(false);
  });
});

describe("exec before and around the start", () => {
  it("starts nothing when the signal was aborted before the call (a process ended at once could still finish first)", async () => {
    const controller = new AbortController();
    controller.abort();
    const dir = makeTempDir();
    const spawned: number[] = [];
    const logPath = join(dir, "step.log");
    const result = await exec(["sh", "-c", "echo started > started.txt; echo finished"], {
      cwd: dir,
      signal: controller.signal,
      logPath,
      captureStdout: true,
      onSpawn: (pid) => spawned.push(pid),
    });
    expect(result).toMatchObject({ aborted: true, timedOut: false, exitCode: null, signal: null, tail: "", logPath });
    expect(result.stdout?.toString()).toBe("");
    expect(result.spawnError).toBeUndefined();
    expect(spawned).toEqual([]);
    expect(existsSync(join(dir, "started.txt"))).toBe(false);
  });

  it("gives the child an empty stdin, closed, when no input is given", async () => {
    const result = await exec(["sh", "-c", "cat; echo end"], { cwd: makeTempDir(), captureStdout: true });
    expect(result.exitCode).toBe(0);
    expect(result.stdout?.toString()).toBe("end\n");
  });

  it("goes on when the child exits without reading a large input (the broken pipe is not an error of the call)", async () => {
    const result = await exec(["true"], { cwd: makeTempDir(), input: Buffer.alloc(8 * 1024 * 1024, 0x61) });
    expect(result.exitCode).toBe(0);
    expect(result.spawnError).toBeUndefined();
  });

  it("takes no longer, by its own measure, than the call took", async () => {
    const before = performance.now();
    const result = await exec(["sh", "-c", "sleep 0.1"], { cwd: makeTempDir() });
    const took = performance.now() - before;
    expect(result.durationMs).toBeGreaterThanOrEqual(100);
    expect(result.durationMs).toBeLessThanOrEqual(Math.ceil(took));
  });

  it("refuses an empty program name itself, and passes node's refusal of a NUL byte on", async () => {
    const dir = makeTempDir();
    await expect(exec([""], { cwd: dir })).rejects.toThrow("exec: argv must name a program");
    await expect(exec(["echo", "a\0b"], { cwd: dir, logPath: join(dir, "nul.log") })).rejects.toMatchObject({ code: "ERR_INVALID_ARG_VALUE" });
  });

  it("describes a program that may not be run by its error code", async () => {
    const dir = makeTempDir();
    const script = join(dir, "not-executable.sh");
    writeFileSync(script, "#!/bin/sh\necho ran\n", { mode: 0o644 });
    const result = await exec([script], { cwd: dir });
    expect(result.exitCode).toBeNull();
    expect(result.spawnError).toMatch(/^EACCES: /);
    expect(result.tail).not.toContain("ran");
  });
});

describe("exec and the child's group", () => {
  it("tells a running group from a finished one", async () => {
    const controller = new AbortController();
    let pid = 0;
    const running = exec(["sleep", "600"], { cwd: makeTempDir(), signal: controller.signal, killGraceMs: 300, onSpawn: (child) => (pid = child) });
    await eventually("the child to start", () => (pid !== 0 ? true : undefined), 60_000);
    expect(groupAlive(pid)).toBe(true);
    controller.abort();
    await running;
    expect(groupAlive(pid)).toBe(false);
    // Ending a group that is gone returns at once.
    await terminateGroup(pid, 600_000);
  });

  it("returns when only a process that left the group still holds its pipes, and stops reading them", async () => {
    const dir = makeTempDir();
    const pidFile = join(dir, "straggler");
    const pipes = (): number => process.getActiveResourcesInfo().filter((name) => name === "PipeWrap").length;
    const before = pipes();
    stragglers.push(pidFile);
    // setsid: the straggler leaves the group (so exec cannot end it) but keeps stdout and stderr.
    // Once told to, it writes to stdout once more, and notes whether anyone still read it.
    const late = "while [ ! -f write ]; do sleep 0.02; done; if echo late; then touch wrote; else touch refused; fi";
    const script = `setsid sh -c 'trap "" PIPE; echo $$ > straggler.tmp; mv straggler.tmp straggler; ${late}; exec sleep 600' & while [ ! -f straggler ]; do sleep 0.02; done; echo started`;
    const result = await exec(["sh", "-c", script], { cwd: dir, killGraceMs: 300 });
    expect(result.exitCode).toBe(0);
    expect(result.tail).toBe("started");
    expect(isRunning(readPid(pidFile))).toBe(true);
    // The pipes the straggler holds are let go of, not read for as long as it lives: its
    // later write finds no reader.
    writeFileSync(join(dir, "write"), "");
    const outcome = await eventually("the straggler's late write", () => ["refused", "wrote"].find((name) => existsSync(join(dir, name))), 30_000);
    expect(outcome).toBe("refused");
    await eventually("exec to let go of the straggler's pipes", () => (pipes() <= before ? true : undefined), 30_000);
  });

  it("counts a zombie as gone: a group left with only a zombie ends without waiting out the grace", async () => {
    const dir = makeTempDir();
    // A member forks a child that exits at once, then leaves the group (setsid) without ever
    // reaping it: the group's one remaining member is a zombie nobody will collect.
    const perl =
      'use POSIX; my $c = fork(); if ($c == 0) { POSIX::_exit(0) } POSIX::setsid(); open(my $f, ">", "zombie.tmp"); print $f $c; close $f; rename("zombie.tmp", "zombie"); open($f, ">", "parent.tmp"); print $f $$; close $f; rename("parent.tmp", "parent"); sleep 600';
    const script = `perl -e '${perl}' >/dev/null 2>&1 & while [ ! -f parent ]; do sleep 0.02; done`;
    stragglers.push(join(dir, "parent"));
    // A grace of ten minutes: waiting for the zombie to go would outlast the test's deadline.
    const result = await exec(["sh", "-c", script], { cwd: dir, killGraceMs: 600_000 });
    expect(result.exitCode).toBe(0);
    const zombie = readPid(join(dir, "zombie"));
    expect(isRunning(zombie)).toBe(false);
    // It is still listed (as a zombie), yet it has no identity: it runs no more.
    expect(existsSync(`/proc/${zombie}`)).toBe(true);
    expect(identityOf(zombie)).toBeUndefined();
  }, 120_000);
});
