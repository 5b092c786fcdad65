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

const { values } = parseArgs({ options: { reps: { type: "string", default: "7" } } });
const REPS = Number(values.reps);
const root = mkdtempSync(join(tmpdir(), "harness-bench-timeouts-"));

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function seat(): Promise<number> {
  const dir = mkdtempSync(join(root, "seat-"));
  const [worktree, artifactDir] = [join(dir, "wt"), join(dir, "artifacts")];
  mkdirSync(worktree);
  mkdirSync(artifactDir);
  const promptFile = join(dir, "prompt.md");
  writeFileSync(promptFile, "bench\n");
  const result = await runSeat({
    worktree, artifactDir, promptFile, logPath: join(dir, "seat.log"), stage: "implementer", attempt: 1, envAllow: [],
    launch: { command: "sleep 30" }, timeoutMs: 300, killGraceMs: 300,
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

const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
try {
  for (let rep = 0; rep < REPS; rep += 1) {
    for (const [name, run] of Object.entries(cases)) samples[name]?.push(await run());
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
const base = median(samples.baseline ?? []);
console.log(`baseline sh -c 'exit 0': ${base.toFixed(0)} ms (median of ${REPS})`);
for (const name of Object.keys(cases).filter((n) => n !== "baseline")) {
  const value = median(samples[name] ?? []);
  console.log(`${name}: ${value.toFixed(0)} ms beyond its deadline  ratio to baseline ${(value / Math.max(base, 1)).toFixed(2)}x`);
}
