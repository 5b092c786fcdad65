/**
 * The cost of the sandbox per launch: one command run through `Sandbox.run` (bubblewrap with
 * the step's view, limits, a fresh HOME and TMPDIR, a pids cgroup where the host allows it)
 * against the same command through `exec` alone, interleaved in the same run so drift on a
 * shared machine affects both. Target: ≤ 20 ms more per launch.
 *
 *   node --import tsx bench/sandbox.ts [--launches 60] [--command true]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { exec } from "../src/exec/index.js";
import { probeSandbox, sandboxFromEnv } from "../src/sandbox/index.js";
import { formatPaired, measurePaired, medianDifference } from "./lib/paired.js";

const { values } = parseArgs({ options: { launches: { type: "string", default: "60" }, command: { type: "string", default: "true" } } });
const LAUNCHES = Number(values.launches);
const COMMAND = ["/bin/sh", "-c", values.command ?? "true"];

const sandbox = sandboxFromEnv();
const status = await probeSandbox(sandbox);
if (status.state !== "on") throw new Error(`the sandbox is not usable here (${status.state === "unavailable" ? status.reason : "HARNESS_SANDBOX=off"})`);
const dir = mkdtempSync(join(tmpdir(), "harness-bench-sandbox-"));
try {
  const sandboxed = async (network = false): Promise<number> => {
    const started = performance.now();
    const result = await sandbox.run(COMMAND, { cwd: dir }, { purpose: "suite", network, writable: [dir] });
    if (result.exitCode !== 0) throw new Error(`sandboxed launch failed: ${result.tail}`);
    return performance.now() - started;
  };
  const plain = async (): Promise<number> => {
    const started = performance.now();
    const result = await exec(COMMAND, { cwd: dir });
    if (result.exitCode !== 0) throw new Error(`launch failed: ${result.tail}`);
    return performance.now() - started;
  };
  console.log(`launches=${LAUNCHES} command=${JSON.stringify(values.command)}; each against exec alone, interleaved A B B A`);
  const suite = await measurePaired(() => sandboxed(false), plain, LAUNCHES);
  console.log(formatPaired("sandboxed (network off, as for suites) ÷ exec alone", suite));
  const withNet = await measurePaired(() => sandboxed(true), plain, LAUNCHES);
  console.log(formatPaired("sandboxed (network on, as for provisioning and agents) ÷ exec alone", withNet));
  const cost = medianDifference(suite);
  console.log(`sandbox cost per launch (median of pairs): ${cost.toFixed(1)} ms  target <= 20 ms  ${suite.inconclusive ? "INCONCLUSIVE" : cost <= 20 ? "MET" : "NOT MET"}; with network ${medianDifference(withNet).toFixed(1)} ms`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
