import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { getEventListeners } from "node:events";
import { join } from "node:path";
import { exec, ExecLogError, execShell, succeeded } from "../../src/exec/index.js";
import { isRunning, makeTempDir, readPid, removeTempDirs } from "../support/tmp.js";
import { until } from "../support/poll.js";

afterAll(removeTempDirs);

describe("exec", () => {
  it("reports exit code, captured stdout, and stderr in the tail", async () => {
    const result = await exec(["sh", "-c", "echo out; echo err >&2; exit 7"], { cwd: makeTempDir(), captureStdout: true });
    expect(result.exitCode).toBe(7);
    expect(result.signal).toBeNull();
    expect(result.timedOut).toBe(false);
    expect(succeeded(result)).toBe(false);
    expect(result.stdout?.toString()).toBe("out\n");
    expect(result.tail).toContain("err");
  });

  it("measures the child's duration from spawn to exit", async () => {
    // A lower bound only: the child cannot finish before its own sleep; how much later is the machine's business.
    const result = await exec(["sh", "-c", "sleep 0.3"], { cwd: makeTempDir() });
    expect(result.exitCode).toBe(0);
    expect(Number.isInteger(result.durationMs)).toBe(true);
    expect(result.durationMs).toBeGreaterThanOrEqual(300);
  });

  it("runs in the given directory and passes stdin", async () => {
    const dir = makeTempDir();
    const result = await exec(["sh", "-c", "pwd; cat"], { cwd: dir, input: "from stdin", captureStdout: true });
    expect(result.stdout?.toString()).toBe(`${dir}\nfrom stdin`);
  });

  it("describes a program that does not exist instead of throwing", async () => {
    const result = await exec(["no-such-program-harness"], { cwd: makeTempDir() });
    expect(result.exitCode).toBeNull();
    expect(result.spawnError).toMatch(/ENOENT.*no-such-program-harness/);
    expect(result.tail).toContain("could not start");
  });

  it("names a working directory that does not exist", async () => {
    const missing = join(makeTempDir(), "gone");
    const result = await exec(["true"], { cwd: missing });
    expect(result.spawnError).toContain(`working directory ${missing} does not exist`);
  });

  it("rejects an empty argv and a log path that cannot be opened", async () => {
    const dir = makeTempDir();
    const empty: unknown = await exec([], { cwd: dir }).catch((error: unknown) => error);
    expect(empty).toBeInstanceOf(TypeError);
    expect((empty as TypeError).message).toBe("exec: argv must name a program");
    writeFileSync(join(dir, "file"), "");
    await expect(exec(["true"], { cwd: dir, logPath: join(dir, "file", "x.log") })).rejects.toBeInstanceOf(ExecLogError);
  });

  it("streams output to the log while the child still runs", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "logs", "run.log");
    const running = exec(["sh", "-c", "echo first; while [ ! -f go ]; do sleep 0.02; done; echo second >&2"], { cwd: dir, logPath });
    await until("the first line in the log", () => existsSync(logPath) && readFileSync(logPath, "utf8").includes("first"), 10_000);
    expect(readFileSync(logPath, "utf8")).not.toContain("second");
    writeFileSync(join(dir, "go"), "");
    const result = await running;
    expect(result.logPath).toBe(logPath);
    expect(readFileSync(logPath, "utf8")).toBe("first\nsecond\n");
  });

  it("streams to the log through pipes too when stdout is also captured", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "piped.log");
    const running = exec(["sh", "-c", "echo first; while [ ! -f go ]; do sleep 0.02; done; echo second"], { cwd: dir, logPath, captureStdout: true });
    await until("the first line in the log", () => existsSync(logPath) && readFileSync(logPath, "utf8").includes("first"), 10_000);
    writeFileSync(join(dir, "go"), "");
    const result = await running;
    expect(result.stdout?.toString()).toBe("first\nsecond\n");
    expect(result.tail).toBe("first\nsecond");
    expect(readFileSync(logPath, "utf8")).toBe("first\nsecond\n");
  });

  it("appends to an existing log and keeps only this run's output in the tail", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "shared.log");
    writeFileSync(logPath, "earlier run\n");
    const result = await exec(["sh", "-c", "echo now; echo also >&2"], { cwd: dir, logPath });
    expect(result.tail).toBe("now\nalso");
    expect(readFileSync(logPath, "utf8")).toBe("earlier run\nnow\nalso\n");
  });

  it("still keeps a tail when the log is /dev/null", async () => {
    const result = await exec(["sh", "-c", "echo kept"], { cwd: makeTempDir(), logPath: "/dev/null" });
    expect(result.tail).toBe("kept");
  });

  it("keeps only a bounded tail of a large output while the log gets all of it", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "big.log");
    const result = await execShell("yes 0123456789 | head -c 8000000", { cwd: dir, logPath, tailLines: 5 });
    expect(result.exitCode).toBe(0);
    expect(statSync(logPath).size).toBe(8_000_000);
    expect(result.tail.split("\n")).toHaveLength(5);
  });

  it("ends a child at its timeout", async () => {
    const result = await exec(["sleep", "600"], { cwd: makeTempDir(), timeoutMs: 300, killGraceMs: 5000 });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe("SIGTERM");
    expect(result.exitCode).toBeNull();
    // How promptly it ends is bench/timeouts.ts's claim; the 600 s sleep would outlive jest's deadline if it never did.
  });

  it("kills a grandchild that ignores SIGTERM at the timeout", async () => {
    const dir = makeTempDir();
    const result = await exec(["sh", "-c", "trap '' TERM; sleep 600 & echo $! > pid; wait"], {
      cwd: dir,
      timeoutMs: 3000,
      killGraceMs: 300,
    });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe("SIGKILL");
    expect(isRunning(readPid(join(dir, "pid")))).toBe(false);
  });

  it("does not hang on a grandchild that keeps stdout open after its parent exited", async () => {
    const dir = makeTempDir();
    const result = await exec(["sh", "-c", "sleep 600 & echo $! > pid; echo done; exit 0"], { cwd: dir, killGraceMs: 300 });
    expect(result.exitCode).toBe(0);
    expect(result.tail).toBe("done");
    expect(isRunning(readPid(join(dir, "pid")))).toBe(false);
  });

  it("does not leave a SIGTERM-ignoring background process behind after a normal exit", async () => {
    const dir = makeTempDir();
    const result = await exec(["sh", "-c", "trap '' TERM; sleep 600 >/dev/null 2>&1 & echo $! > pid; exit 0"], {
      cwd: dir,
      killGraceMs: 300,
    });
    expect(result.exitCode).toBe(0);
    expect(isRunning(readPid(join(dir, "pid")))).toBe(false);
  });

  it("ends the tree when the caller aborts, and removes its abort listener", async () => {
    const dir = makeTempDir();
    const controller = new AbortController();
    let spawned = 0;
    // Written then renamed, so the pid file is complete once it exists.
    const result = await exec(["sh", "-c", "sleep 600 & echo $! > pid.tmp; mv pid.tmp pid; wait"], {
      cwd: dir,
      signal: controller.signal,
      killGraceMs: 300,
      onSpawn: (pid) => {
        spawned = pid;
        // Aborts once the pid file is there, or at the guard (the test then fails reading it).
        void until("the pid file", () => existsSync(join(dir, "pid")), 10_000).then(
          () => controller.abort(),
          () => controller.abort(),
        );
      },
    });
    expect(spawned).toBeGreaterThan(0);
    expect(result.aborted).toBe(true);
    expect(result.timedOut).toBe(false);
    expect(isRunning(readPid(join(dir, "pid")))).toBe(false);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("gives a child that handles SIGTERM its grace to finish before anything is killed", async () => {
    const dir = makeTempDir();
    const controller = new AbortController();
    // The handler takes a moment (its own sleep, in the group) and then exits 3: a SIGKILL sent
    // before the grace is over would end it with the signal instead.
    const script = "trap 'sleep 0.5; exit 3' TERM; sleep 600 & touch ready; wait";
    const running = exec(["sh", "-c", script], { cwd: dir, signal: controller.signal, killGraceMs: 600_000 });
    try {
      await until("the child ready", () => existsSync(join(dir, "ready")), 60_000);
    } finally {
      controller.abort();
    }
    expect(await running).toMatchObject({ aborted: true, exitCode: 3, signal: null });
  });

  it("removes its abort listener after a normal finish", async () => {
    const controller = new AbortController();
    const result = await exec(["true"], { cwd: makeTempDir(), signal: controller.signal });
    expect(result.exitCode).toBe(0);
    expect(result.aborted).toBeUndefined();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});
