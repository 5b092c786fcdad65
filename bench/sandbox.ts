/**
 * The cost of the sandbox per launch: one command run through `Sandbox.run` (bubblewrap with
 * the step's view, limits, a fresh HOME and TMPDIR, a pids cgroup where the host allows it)
 * against the same command through `exec` alone, interleaved in the same run so drift on a
 * shared machine affects both. Target: ≤ 20 ms more per launch. A third side runs bubblewrap
 * alone (the same namespaces and system view, no limits, cgroup or scratch folders), the floor
 * of any bubblewrap sandbox on this machine, so the sandbox's own share can be told apart.
 *
 * A second part pairs a networked step in its own network namespace (pasta or slirp4netns,
 * with its rules: the default) against the same step on the host's network (the policy before
 * the namespace, now HARNESS_SANDBOX_NET=host), rotating which goes first, twice: joining a
 * spare namespace made ahead, and making one for the step. Target: ≤ 30 ms more per launch
 * with a spare (the steady state).
 *
 *   node --import tsx bench/sandbox.ts [--launches 60] [--net-launches 40] [--command true]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { exec } from "../src/exec/index.js";
import { bwrapArgs, dropSpares, hostSystemEntries, probeSandbox, readySpares, Sandbox, sandboxFromEnv, sparesMade } from "../src/sandbox/index.js";
import { formatPaired, summarisePairs } from "./lib/paired.js";

const { values } = parseArgs({
  options: { launches: { type: "string", default: "60" }, "net-launches": { type: "string", default: "40" }, command: { type: "string", default: "true" } },
});
const LAUNCHES = Number(values.launches);
const COMMAND = ["/bin/sh", "-c", values.command ?? "true"];

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};
const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;

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
  const bareBwrap = [
    "bwrap",
    ...bwrapArgs({ cwd: dir, home: dir, tmp: dir, writable: [dir], readable: [], masked: [], network: false, system: hostSystemEntries() }),
    ...COMMAND,
  ];
  const bwrapOnly = async (): Promise<number> => {
    const started = performance.now();
    const result = await exec(bareBwrap, { cwd: dir });
    if (result.exitCode !== 0) throw new Error(`bare bwrap launch failed: ${result.tail}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 5; i += 1) {
    await sandboxed();
    await plain();
  }
  const inBox: number[] = [];
  const withNet: number[] = [];
  const bare: number[] = [];
  const extra: number[] = [];
  const floor: number[] = [];
  const own: number[] = [];
  const bwrapMs: number[] = [];
  const loadBefore = loadavg()[0] ?? 0;
  for (let i = 0; i < LAUNCHES; i += 1) {
    // Rotate the order, so no side always runs on a warmer machine.
    const order = [0, 1, 2, 3].map((k) => (k + i) % 4);
    const took: number[] = [0, 0, 0, 0];
    for (const k of order) took[k] = k === 0 ? await plain() : k === 3 ? await bwrapOnly() : await sandboxed(k === 2);
    const [d = 0, c = 0, n = 0, w = 0] = took;
    floor.push(w - d);
    bwrapMs.push(w);
    own.push(c - w);
    bare.push(d);
    inBox.push(c);
    withNet.push(n);
    extra.push(c - d);
  }
  console.log(`launches=${LAUNCHES} command=${JSON.stringify(values.command)}`);
  console.log(`exec alone:  median ${median(bare).toFixed(1)} ms  p90 ${quantile(bare, 0.9).toFixed(1)} ms`);
  console.log(
    `sandboxed:   median ${median(inBox).toFixed(1)} ms  p90 ${quantile(inBox, 0.9).toFixed(1)} ms  (network off: its own network namespace, as for suites)`,
  );
  console.log(
    `  with net:  median ${median(withNet).toFixed(1)} ms  p90 ${quantile(withNet, 0.9).toFixed(1)} ms  (network on, as for provisioning and agents)`,
  );
  const cost = median(extra);
  console.log(
    `sandbox cost per launch (median of pairs): ${cost.toFixed(1)} ms  p90 ${quantile(extra, 0.9).toFixed(1)} ms  target <= 20 ms  ${cost <= 20 ? "MET" : "NOT MET"}`,
  );
  console.log(
    `bubblewrap alone, over exec (median of pairs): ${median(floor).toFixed(1)} ms  p90 ${quantile(floor, 0.9).toFixed(1)} ms  (the floor of any bubblewrap sandbox here)`,
  );
  console.log(`the sandbox's own share, over bubblewrap alone (median of pairs): ${median(own).toFixed(1)} ms  p90 ${quantile(own, 0.9).toFixed(1)} ms`);
  console.log(
    `load average: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  console.log(`ratio sandboxed/exec (medians): ${(median(inBox) / median(bare)).toFixed(2)}`);
  // The same launches as paired ratios (bench/lib/paired.ts: median of per-launch ratios, range, INCONCLUSIVE when the baseline moved more than the effect).
  const load = { before: loadBefore, after: loadavg()[0] ?? 0 };
  console.log(formatPaired("sandboxed ÷ exec alone", summarisePairs(inBox, bare, load)));
  console.log(formatPaired("sandboxed ÷ bubblewrap alone", summarisePairs(inBox, bwrapMs, load)));
  console.log(formatPaired("bubblewrap alone ÷ exec alone", summarisePairs(bwrapMs, bare, load)));
  await networkNamespaceCost();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A networked step in its own namespace against the same step on the host's network, paired:
 * joining a spare made ahead (the steady state: the App makes the next spare while a step
 * runs, and steps are seconds apart) and making one for the step (the first networked step of
 * a kind of rules, or a spare dropped). Before each launch the spares being made are waited
 * for, so none of their work lands inside a timed launch.
 */
async function networkNamespaceCost(): Promise<void> {
  const netLaunches = Number(values["net-launches"]);
  const tools = sandbox.netTools;
  if ("missing" in tools) throw new Error(`no network namespace can be made here: ${tools.missing.join(", ")}`);
  const hostNet = new Sandbox({ ...sandbox.settings, net: { ...sandbox.settings.net, mode: "host" } });
  const launch = async (box: Sandbox, spare: "warm" | "cold" | "none"): Promise<number> => {
    await sparesMade();
    if (spare === "cold") await dropSpares();
    if (spare === "warm" && readySpares().length === 0) throw new Error("no spare namespace was ready for the warm launch");
    const started = performance.now();
    const result = await box.run(COMMAND, { cwd: dir }, { purpose: "agent", network: true, writable: [dir] });
    if (result.exitCode !== 0) throw new Error(`networked launch failed: ${result.tail}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 3; i += 1) {
    await launch(sandbox, "cold");
    await launch(sandbox, "warm");
    await launch(hostNet, "none");
  }
  const warm: number[] = [];
  const cold: number[] = [];
  const shared: number[] = [];
  const loadBefore = loadavg()[0] ?? 0;
  for (let i = 0; i < netLaunches; i += 1) {
    // Rotate which side goes first.
    const sides = [
      () => launch(sandbox, "warm").then((ms) => warm.push(ms)),
      () => launch(sandbox, "cold").then((ms) => cold.push(ms)),
      () => launch(hostNet, "none").then((ms) => shared.push(ms)),
    ];
    for (let k = 0; k < sides.length; k += 1) await sides[(i + k) % sides.length]?.();
  }
  await dropSpares();
  const loadAfter = loadavg()[0] ?? 0;
  const extra = (xs: number[]): number[] => xs.map((ms, i) => ms - (shared[i] ?? 0));
  const warmCost = median(extra(warm));
  console.log("");
  console.log(`network namespace (${tools.kind}): ${netLaunches} rounds of networked launches of ${JSON.stringify(values.command)}`);
  console.log(`  host network (before):      median ${median(shared).toFixed(1)} ms  p90 ${quantile(shared, 0.9).toFixed(1)} ms`);
  console.log(`  own namespace, spare ready: median ${median(warm).toFixed(1)} ms  p90 ${quantile(warm, 0.9).toFixed(1)} ms`);
  console.log(`  own namespace, made now:    median ${median(cold).toFixed(1)} ms  p90 ${quantile(cold, 0.9).toFixed(1)} ms`);
  console.log(
    `  extra per launch with a spare (median of pairs): ${warmCost.toFixed(1)} ms  p90 ${quantile(extra(warm), 0.9).toFixed(1)} ms  target <= 30 ms  ${warmCost <= 30 ? "MET" : "NOT MET"}`,
  );
  console.log(`  extra per launch making one (median of pairs):  ${median(extra(cold)).toFixed(1)} ms  p90 ${quantile(extra(cold), 0.9).toFixed(1)} ms`);
  console.log(
    `  load average: before ${loadBefore.toFixed(1)}, after ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  console.log(formatPaired("spare ÷ host network", summarisePairs(warm, shared, { before: loadBefore, after: loadAfter })));
  console.log(formatPaired("made now ÷ host network", summarisePairs(cold, shared, { before: loadBefore, after: loadAfter })));
}
