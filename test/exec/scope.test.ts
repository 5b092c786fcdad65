/**
 * The step scope: the stop signal and the ledger of the runner's job reach every exec made
 * inside it, however deep, beside a call's own signal, and nothing outside it.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { getPriority } from "node:os";
import { join } from "node:path";
import { currentStepScope, exec, ProcessLedger, runInStepScope, type ExecOptions, type ExecResult, type StepScope } from "../../src/exec/index.js";
import { eventually } from "../support/poll.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/**
 * A process that runs until it is ended, or until this test process is gone (it looks once a
 * second), so that a test process killed before its `finally` leaves nothing running.
 */
const UNTIL_ENDED = ["sh", "-c", "while kill -0 $PPID 2>/dev/null; do sleep 1; done"];

/** Starts {@link UNTIL_ENDED} within `scope` (outside any when undefined); resolves once it runs. */
async function startIn(scope: StepScope | undefined, options: Partial<ExecOptions> = {}): Promise<{ pid: number; result: Promise<ExecResult> }> {
  let pid = 0;
  const run = (): Promise<ExecResult> => exec(UNTIL_ENDED, { cwd: makeTempDir(), killGraceMs: 300, ...options, onSpawn: (child) => (pid = child) });
  const result = scope === undefined ? run() : runInStepScope(scope, run);
  await eventually("the process to start", () => (pid !== 0 ? true : undefined), 60_000);
  return { pid, result };
}

describe("runInStepScope", () => {
  it("is the scope of the code it runs, across awaits, and of nothing outside it", async () => {
    const scope: StepScope = { signal: new AbortController().signal };
    expect(currentStepScope()).toBeUndefined();
    const seen = await runInStepScope(scope, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return currentStepScope();
    });
    expect(seen).toBe(scope);
    expect(currentStepScope()).toBeUndefined();
  });

  it("records a process in the scope's ledger while it runs, and forgets it once its group is gone", async () => {
    const dir = makeTempDir();
    const ledgerDir = join(dir, "ledger");
    let pid = 0;
    const script = "while [ ! -f go ]; do sleep 0.02; done";
    const running = runInStepScope({ ledger: new ProcessLedger(ledgerDir) }, () => exec(["sh", "-c", script], { cwd: dir, onSpawn: (child) => (pid = child) }));
    try {
      await eventually("the record", () => (pid !== 0 && existsSync(join(ledgerDir, `${pid}.json`)) ? true : undefined), 60_000);
      expect(JSON.parse(readFileSync(join(ledgerDir, `${pid}.json`), "utf8"))).toMatchObject({ child: { pid }, owner: { pid: process.pid }, program: "sh" });
    } finally {
      writeFileSync(join(dir, "go"), "");
    }
    expect((await running).exitCode).toBe(0);
    expect(readdirSync(ledgerDir)).toEqual([]);
  });
});

describe("the scope's signal and the call's own", () => {
  it("ends the process by the scope's signal, with no signal of the call's own", async () => {
    const stop = new AbortController();
    const { result } = await startIn({ signal: stop.signal });
    stop.abort();
    expect(await result).toMatchObject({ aborted: true, timedOut: false, signal: "SIGTERM", exitCode: null });
  });

  it("ends the process by either signal when both are given", async () => {
    for (const which of ["scope", "own"] as const) {
      const scopeStop = new AbortController();
      const ownStop = new AbortController();
      const { result } = await startIn({ signal: scopeStop.signal }, { signal: ownStop.signal });
      (which === "scope" ? scopeStop : ownStop).abort();
      expect(await result).toMatchObject({ aborted: true, signal: "SIGTERM" });
      // The other one, aborted after the end, changes nothing.
      (which === "scope" ? ownStop : scopeStop).abort();
    }
  });

  it("ends the process at once when the scope was stopped before the call", async () => {
    const stop = new AbortController();
    stop.abort();
    const result = await runInStepScope({ signal: stop.signal }, () => exec(["sh", "-c", "sleep 5; echo finished"], { cwd: makeTempDir(), killGraceMs: 300 }));
    expect(result).toMatchObject({ aborted: true, exitCode: null });
    expect(result.tail).not.toContain("finished");
  });

  it("runs a call outside any scope by its own signal only", async () => {
    const stop = new AbortController();
    expect(currentStepScope()).toBeUndefined();
    const { result } = await startIn(undefined, { signal: stop.signal });
    stop.abort();
    expect(await result).toMatchObject({ aborted: true, signal: "SIGTERM" });
  });

  it("starts every process of a scope niced by its niceness, which their own children inherit, and none outside it", async () => {
    const niceness = (scope: StepScope | undefined) => {
      const run = () => exec(["sh", "-c", "nice; sh -c nice"], { cwd: makeTempDir(), captureStdout: true });
      return (scope === undefined ? run() : runInStepScope(scope, run)).then((result) => result.stdout?.toString().trim().split("\n"));
    };
    // Relative to this process's own (a test run may itself be niced), capped at 19 as nice caps it.
    const own = getPriority();
    const raised = String(Math.min(19, own + 10));
    expect(await niceness({ niceness: 10 })).toEqual([raised, raised]);
    expect(await niceness(undefined)).toEqual([String(own), String(own)]);
    expect(await niceness({})).toEqual([String(own), String(own)]);
    // A program that is not there is nice's to report: exit 127 in its words, not a spawn error.
    const missing = await runInStepScope({ niceness: 10 }, () => exec(["no-such-program-for-the-scope"], { cwd: makeTempDir() }));
    expect(missing.exitCode).toBe(127);
    expect(missing.spawnError).toBeUndefined();
    expect(missing.tail).toMatch(/no-such-program-for-the-scope.*No such file or directory/);
  });
});
