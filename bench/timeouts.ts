/**
 * Benchmark: how promptly src/exec ends what it must end, the claims the tests only guard
 * against hangs. Each case's duration is reported against a baseline measured in the same run,
 * interleaved: `sh -c 'exit 0'` through the same exec (spawn, wait and group check).
 *   timeout  — `sleep 600` with a 300 ms timeout: duration − 300 ms, the overshoot;
 *   term-ignoring — a shell that ignores SIGTERM, timeout 300 ms, grace 300 ms: duration − 600 ms;
 *   held-stdout — a grandchild that keeps stdout open after its parent exited: duration;
 *   seat — runSeat of `sleep 30` with a 300 ms timeout: duration − 300 ms.
 * Figures are medians of repeated runs.
 *
 * Run: node --import tsx bench/timeouts.ts [--reps 7]
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { exec } from "../src/exec/index.js";
import { runSeat } from "../src/agents/index.js";
import { formatPaired, measurePaired } from "./lib/paired.js";
import { sandboxFromEnv } from "../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

const { values } = parseArgs({ options: { reps: { type: "string", default: "7" } } });
const REPS = Number(values.reps);
const root = mkdtempSync(join(tmpdir(), "harness-bench-timeouts-"));

async function seat(): Promise<number> {
  const dir = mkdtempSync(join(root, "seat-"));
  const [worktree, artifactDir] = [join(dir, "wt"), join(dir, "artifacts")];
  mkdirSync(worktree);
  mkdirSync(artifactDir);
  const promptFile = join(dir, "prompt.md");
  writeFileSync(promptFile, "bench\n");
  const result = await runSeat({
    sandbox,
    worktree,
    artifactDir,
    promptFile,
    logPath: join(dir, "seat.log"),
    stage: "implementer",
    attempt: 1,
    envAllow: [],
    launch: { command: "sleep 30" },
    timeoutMs: 300,
    killGraceMs: 300,
  });
  return result.durationMs - 300;
}

const cases: Record<string, () => Promise<number>> = {
  baseline: async () => (await exec(["sh", "-c", "exit 0"], { cwd: root })).durationMs,
  timeout: async () => (await exec(["sleep", "600"], { cwd: root, timeoutMs: 300, killGraceMs: 300 })).durationMs - 300,
  "term-ignoring": async () => (await exec(["sh", "-c", "trap '' TERM; sleep 600 & wait"], { cwd: root, timeoutMs: 300, killGraceMs: 300 })).durationMs - 600,
  "held-stdout": async () => (await exec(["sh", "-c", "sleep 600 & echo done; exit 0"], { cwd: root, killGraceMs: 300 })).durationMs,
  seat,
};

try {
  console.log(`reps=${REPS}; each case against sh -c 'exit 0' through the same exec, interleaved A B B A`);
  for (const [name, run] of Object.entries(cases)) {
    if (name === "baseline") continue;
    const baseline = cases.baseline as () => Promise<number>;
    console.log(formatPaired(`${name}: ms beyond its deadline ÷ a whole short run`, await measurePaired(run, baseline, REPS)));
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
