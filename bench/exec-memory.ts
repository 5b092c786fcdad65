/**
 * Benchmark: the harness's memory while a child prints 1 GiB through src/exec.
 * Run: npm run bench -- exec-memory [--reps 3]
 *
 * Each case runs in a fresh Node process (so one case's heap growth cannot hide another's):
 * it samples its own RSS every 10 ms while the child prints, and reports the peak against the
 * RSS it had just before the run. Cases: output through pipes with no log, a log on
 * /dev/null (pipes, since the tail cannot be read back), a log file (the child writes it
 * directly), and a log file with stdout also captured (pipes; capture bounded to 1 MiB).
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { exec, type ExecOptions } from "../src/exec/index.js";
import { formatPaired, measurePaired } from "./lib/paired.js";

const GIB = 1024 * 1024 * 1024;
const MIB = 1024 * 1024;
// 64-byte lines: a realistic log shape with many newlines for the tail to track.
const COMMAND = `yes 'provisioning output line, 64 bytes long, for the memory bench.' | head -c ${GIB}`;
const CASES = ["no log", "log to /dev/null", "log to a file", "log to a file + capture"] as const;
type CaseName = (typeof CASES)[number];

interface CaseResult {
  name: CaseName;
  beforeMiB: number;
  peakMiB: number;
  seconds: number;
  logBytes?: number;
}

function optionsFor(name: CaseName, dir: string): Partial<ExecOptions> {
  switch (name) {
    case "no log":
      return {};
    case "log to /dev/null":
      return { logPath: "/dev/null" };
    case "log to a file":
      return { logPath: join(dir, "out.log") };
    case "log to a file + capture":
      return { logPath: join(dir, "out.log"), captureStdout: true, captureBytes: MIB };
  }
}

/** One case, in this process. */
async function runCase(name: CaseName): Promise<CaseResult> {
  const dir = mkdtempSync(join(tmpdir(), "harness-bench-mem-"));
  try {
    const options = optionsFor(name, dir);
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 10);
    const started = performance.now();
    const result = await exec(["/bin/sh", "-c", COMMAND], { cwd: dir, ...options });
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    if (result.exitCode !== 0) throw new Error(`${name}: command failed (${result.exitCode}): ${result.tail}`);
    const out: CaseResult = { name, beforeMiB: before / MIB, peakMiB: peak / MIB, seconds };
    if (options.logPath !== undefined && options.logPath !== "/dev/null") out.logBytes = statSync(options.logPath).size;
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One case in a fresh process of its own. */
async function caseProcess(name: CaseName): Promise<CaseResult> {
  const self = fileURLToPath(import.meta.url);
  const root = fileURLToPath(new URL("..", import.meta.url));
  const run = await exec(["node", "--import", "tsx", self, "--case", name], { cwd: root, captureStdout: true, timeoutMs: 600_000 });
  if (run.exitCode !== 0) throw new Error(`case ${name} failed: ${run.tail}`);
  return JSON.parse(run.stdout?.toString() ?? "") as CaseResult;
}

/**
 * Each logging case against "no log" (output read and dropped: the floor of any exec), the
 * two interleaved A B B A per repetition (bench/lib/paired.ts), each run in its own process.
 * The figure is peak RSS ÷ peak RSS; the absolute worst peak is checked against the target.
 */
async function main(reps: number): Promise<void> {
  const results: CaseResult[] = [];
  const peakOf = (name: CaseName) => async (): Promise<number> => {
    const result = await caseProcess(name);
    results.push(result);
    return result.peakMiB;
  };
  console.log(`reps=${reps}; peak RSS of each case ÷ peak RSS with no log`);
  for (const name of CASES) {
    if (name === "no log") continue;
    console.log(formatPaired(`${name} ÷ no log, peak RSS`, await measurePaired(peakOf(name), peakOf("no log"), reps, { warmup: false }), undefined, "MiB"));
  }
  for (const name of CASES) {
    const runs = results.filter((r) => r.name === name);
    const peak = Math.max(...runs.map((r) => r.peakMiB));
    console.log(
      `  ${name.padEnd(23)} peak RSS up to ${peak.toFixed(1)} MiB (before the run ${runs[0]?.beforeMiB.toFixed(1)} MiB), ${runs.map((r) => `${r.seconds.toFixed(1)} s`).join(", ")}${runs[0]?.logBytes ? `, log ${runs[0].logBytes} bytes` : ""}`,
    );
  }
  const worst = Math.max(...results.map((r) => r.peakMiB));
  console.log(`worst peak RSS: ${worst.toFixed(1)} MiB (target < 120 MiB): ${worst < 120 ? "met" : "MISSED"}`);
}

const caseIndex = process.argv.indexOf("--case");
if (caseIndex >= 0) {
  const name = process.argv[caseIndex + 1] as CaseName;
  if (!CASES.includes(name)) throw new Error(`unknown case ${String(name)}`);
  process.stdout.write(JSON.stringify(await runCase(name)));
} else {
  const { values } = parseArgs({ options: { reps: { type: "string", default: "3" } } });
  await main(Number(values.reps));
}
