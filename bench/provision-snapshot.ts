/**
 * Warm worktrees: provisioning a real project three ways in the same run — cold (fresh
 * HARNESS_HOME, empty package cache), warm cache (a second worktree, the cache full, snapshots
 * off) and linked (a third worktree given the first one's node_modules snapshot) — reported as
 * ratios against cold per round, with the median and range. Target: linked ≤ 0.1× cold.
 * Optionally runs the project's suite, sandboxed, in an installed and in a linked worktree, to
 * show that linking does not change its result.
 *
 *   npm run bench -- provision-snapshot --repo <git repository> [--rounds 3] [--suite "npx vitest run"]
 *
 * The repository is cloned first (it is only read). Cold installs download from the registry.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { exec } from "../src/exec/index.js";
import { sandboxFromEnv } from "../src/sandbox/index.js";
import { git, provisionWorktree } from "../src/workspace/index.js";
import { median } from "./lib/paired.js";

const { values } = parseArgs({ options: { repo: { type: "string" }, rounds: { type: "string", default: "3" }, suite: { type: "string" } } });
if (!values.repo) throw new Error("--repo <git repository> is required (for example a clone of probot/probot)");
const ROUNDS = Number(values.rounds);
const sandbox = sandboxFromEnv();

const root = mkdtempSync(join(tmpdir(), "harness-bench-snapshot-"));
try {
  const repo = join(root, "repo");
  await git(["clone", "-q", "--", values.repo, repo], { cwd: root });
  const cold: number[] = [];
  const warm: number[] = [];
  const linked: number[] = [];
  const last: Record<string, string> = {};
  for (let round = 0; round < ROUNDS; round += 1) {
    const home = join(root, `home-${round}`);
    const provision = async (name: string, snapshots: boolean): Promise<number> => {
      const worktree = join(root, `${name}-${round}`);
      await git(["worktree", "add", "-q", "--detach", worktree, "HEAD"], { cwd: repo });
      const started = performance.now();
      const outcome = await provisionWorktree({ worktree, taskId: name, logPath: join(root, `${name}-${round}.log`), harnessHome: home, sandbox, snapshots });
      const elapsed = performance.now() - started;
      console.log(
        `round ${round + 1} ${name.padEnd(6)} ${(elapsed / 1000).toFixed(2)} s  ${outcome.receipt.cmd ?? ""}${outcome.snapshot ? `  [snapshot ${outcome.snapshot.action}]` : ""}`,
      );
      last[name] = worktree;
      return elapsed;
    };
    cold.push(await provision("cold", true));
    warm.push(await provision("warm", false));
    linked.push(await provision("linked", true));
  }
  const ratios = (xs: number[]): number[] => xs.map((x, index) => x / (cold[index] as number));
  const line = (name: string, xs: number[]): string => {
    const r = ratios(xs);
    return `${name}: ${median(r).toFixed(3)}× cold (${Math.min(...r).toFixed(3)}–${Math.max(...r).toFixed(3)}), median ${(median(xs) / 1000).toFixed(2)} s vs cold ${(median(cold) / 1000).toFixed(2)} s`;
  };
  console.log(line("warm cache", warm));
  console.log(`${line("linked snapshot", linked)}  target ≤ 0.1 ${median(ratios(linked)) <= 0.1 ? "MET" : "NOT MET"}`);
  if (values.suite) {
    // The same suite in an installed and in a linked worktree: linking must not change its result.
    for (const name of ["warm", "linked"]) {
      const worktree = last[name] as string;
      const suite = await sandbox.run(
        ["/bin/sh", "-c", values.suite],
        { cwd: worktree, timeoutMs: 1_800_000, logPath: join(root, `suite-${name}.log`) },
        { purpose: "suite", network: false, writable: [worktree] },
      );
      const summary = suite.tail
        // eslint-disable-next-line no-control-regex
        .replace(/\x1b\[[0-9;]*m/g, "")
        .split("\n")
        .filter((text) => /Test Files|Tests |Errors/.test(text))
        .join(" | ");
      console.log(`suite in the ${name} worktree (${values.suite}): exit ${String(suite.exitCode)}  ${summary}`);
    }
  }
  await exec(["git", "worktree", "prune"], { cwd: repo });
} finally {
  rmSync(root, { recursive: true, force: true });
}
