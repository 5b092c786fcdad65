/**
 * What exec's result holds when the caller leaves options out: only the fields that apply, the
 * default tail and kill grace, and a timeout that counts only against the child's own exit.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_TAIL_LINES, exec } from "../../src/exec/index.js";
import { eventually } from "../support/poll.js";
import { isRunning, makeTempDir, readPid, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

describe("exec's result", () => {
  it("holds only the fields that apply to a plain run, with the argv it ran", async () => {
    const argv = ["sh", "-c", "echo plain"];
    const result = await exec(argv, { cwd: makeTempDir() });
    expect(Object.keys(result).sort()).toEqual(["argv", "durationMs", "exitCode", "signal", "tail", "timedOut"]);
    expect(result).toMatchObject({ argv, exitCode: 0, signal: null, timedOut: false, tail: "plain" });
  });

  it("keeps the last DEFAULT_TAIL_LINES lines of a log it wrote when no tailLines is given", async () => {
    const dir = makeTempDir();
    const count = DEFAULT_TAIL_LINES + 7;
    // The child writes the log itself (no captured stdout): the tail is read back from the file.
    const result = await exec(["sh", "-c", `i=1; while [ $i -le ${count} ]; do echo line$i; i=$((i + 1)); done`], { cwd: dir, logPath: join(dir, "run.log") });
    const expected = Array.from({ length: DEFAULT_TAIL_LINES }, (_, index) => `line${count - DEFAULT_TAIL_LINES + 1 + index}`);
    expect(result.tail.split("\n")).toEqual(expected);
  });

  it("ends a leftover that ignores SIGTERM after the default grace when no killGraceMs is given", async () => {
    const dir = makeTempDir();
    const result = await exec(["sh", "-c", "trap '' TERM; sleep 600 >/dev/null 2>&1 & echo $! > pid.tmp; mv pid.tmp pid; exit 0"], { cwd: dir });
    expect(result.exitCode).toBe(0);
    expect(isRunning(readPid(join(dir, "pid")))).toBe(false);
  });

  it("is not timed out when the child exited in time and only its leftovers outlasted the timeout", async () => {
    const dir = makeTempDir();
    // The child exits at once (well within the 5 s timeout, even on a loaded machine); a
    // leftover in its group ignores SIGTERM and runs until the test writes `go`, which it does
    // only once the timeout has passed, so the timeout falls while exec is ending the leftover.
    const timeoutMs = 5000;
    let spawnedAt = 0;
    const script = "trap '' TERM; (while [ ! -f go ]; do sleep 0.05; done) >/dev/null 2>&1 & exit 0";
    const running = exec(["sh", "-c", script], { cwd: dir, timeoutMs, killGraceMs: 600_000, onSpawn: () => (spawnedAt = performance.now()) });
    try {
      await eventually("the timeout to pass", () => (spawnedAt !== 0 && performance.now() - spawnedAt > timeoutMs + 200 ? true : undefined), 120_000);
    } finally {
      writeFileSync(join(dir, "go"), "");
    }
    const result = await running;
    expect(result).toMatchObject({ exitCode: 0, signal: null, timedOut: false });
  }, 180_000);
});
