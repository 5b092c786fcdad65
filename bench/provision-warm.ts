/**
 * Benchmark: provisioning the same project in a first and then a second fresh worktree.
 * Run: npm run bench -- provision-warm [rounds] [--omit-resolved]
 *
 * The fixture is a git repository with a real package-lock.json of a few dozen packages,
 * generated here with `npm install --package-lock-only` (this needs the npm registry; its
 * metadata cache is kept apart from the harness's, so the first worktree starts cold). Each
 * round uses a fresh HARNESS_HOME: the first worktree fills the shared npm cache, the second
 * installs from it. Reported: warm ÷ cold wall time per round and the median (target ≤ 0.5).
 * `--omit-resolved` writes the lockfile without tarball URLs (npm's omit-lockfile-registry-resolved),
 * so npm has to read package metadata too.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadavg } from "node:os";
import { exec } from "../src/exec/index.js";
import { formatPaired, summarisePairs } from "./lib/paired.js";
import { git, HARNESS_IDENTITY, provisionWorktree } from "../src/workspace/index.js";
import { sandboxFromEnv } from "../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

/** Small packages that together pull a few dozen dependencies. */
const DEPENDENCIES: Record<string, string> = {
  chalk: "4.1.2",
  debug: "4.3.4",
  glob: "7.2.3",
  yargs: "17.7.2",
  semver: "7.6.0",
  "fs-extra": "11.2.0",
};

async function makeFixture(dir: string, omitResolved: boolean): Promise<string> {
  const repo = join(dir, "repo");
  mkdirSync(repo, { recursive: true });
  writeFileSync(
    join(repo, "package.json"),
    `${JSON.stringify({ name: "bench-fixture", version: "1.0.0", private: true, dependencies: DEPENDENCIES }, null, 2)}\n`,
  );
  const lock = await exec(["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: repo,
    // A lockfile as projects usually commit it: with tarball URLs, whatever the local npmrc says.
    env: { set: { npm_config_cache: join(dir, "lockfile-cache"), npm_config_omit_lockfile_registry_resolved: String(omitResolved) } },
    timeoutMs: 300_000,
  });
  if (lock.exitCode !== 0) throw new Error(`npm install --package-lock-only failed:\n${lock.tail}`);
  await git(["-c", "init.defaultBranch=main", "init", "-q"], { cwd: repo });
  await git(["add", "-A"], { cwd: repo });
  await git(["commit", "-q", "-m", "fixture"], { cwd: repo, env: HARNESS_IDENTITY });
  return repo;
}

function packageCount(repo: string): number {
  const lock = JSON.parse(readFileSync(join(repo, "package-lock.json"), "utf8")) as { packages?: Record<string, unknown> };
  return Object.keys(lock.packages ?? {}).filter((key) => key !== "").length;
}

async function timedProvision(repo: string, dir: string, name: string, home: string): Promise<number> {
  const worktree = join(dir, name);
  await git(["worktree", "add", "-q", "-b", name, worktree], { cwd: repo });
  const started = performance.now();
  await provisionWorktree({ sandbox, worktree, taskId: name, logPath: join(dir, `${name}.log`), harnessHome: home });
  const ms = performance.now() - started;
  if (!existsSync(join(worktree, "node_modules", "yargs", "package.json"))) throw new Error(`${name}: dependencies were not installed`);
  return ms;
}

async function main(): Promise<void> {
  const omitResolved = process.argv.includes("--omit-resolved");
  const rounds = Number(process.argv.slice(2).find((arg) => /^\d+$/.test(arg)) ?? "3");
  const dir = mkdtempSync(join(tmpdir(), "harness-bench-warm-"));
  try {
    const repo = await makeFixture(dir, omitResolved);
    const urls = omitResolved ? "without" : "with";
    console.log(`fixture: ${packageCount(repo)} packages in package-lock.json (${urls} tarball URLs); ${rounds} rounds, fresh HARNESS_HOME each`);
    // Not A B B A: the warm install needs the cold one's cache, so each round runs cold then
    // warm on its own fresh HARNESS_HOME; the pairs are summarised as bench/lib/paired.ts does.
    const colds: number[] = [];
    const warms: number[] = [];
    const before = loadavg()[0] ?? 0;
    for (let round = 1; round <= rounds; round += 1) {
      const home = join(dir, `home-${round}`);
      const cold = await timedProvision(repo, dir, `cold-${round}`, home);
      const warm = await timedProvision(repo, dir, `warm-${round}`, home);
      colds.push(cold);
      warms.push(warm);
      const cached = readdirSync(join(home, "cache", "npm")).length > 0;
      console.log(
        `round ${round}: cold ${(cold / 1000).toFixed(2)} s, warm ${(warm / 1000).toFixed(2)} s, warm ÷ cold ${(warm / cold).toFixed(2)} (shared cache used: ${cached})`,
      );
    }
    console.log(formatPaired("warm ÷ cold provisioning", summarisePairs(warms, colds, { before, after: loadavg()[0] ?? 0 }), { max: 0.5 }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
