/**
 * Clean-clone construction against the raw git steps it is made of, and against a worktree.
 *
 * A repository of 20,000 files gets a modest uncommitted change (tracked edits, deletions, a
 * mode change, a binary edit, a few untracked files). Each repetition times, in rotating order:
 *   harness  — mkdtemp + buildCleanClone (everything before the suite starts);
 *   raw      — one shell script: git clone --no-hardlinks, git diff --binary HEAD | git apply,
 *              copy of the untracked files, git add -A, git commit;
 *   worktree — git worktree add --detach of the same repository.
 * Clean-up happens outside the timings. Figures are medians, reported as ratios.
 *
 * Run: node --import tsx bench/clean-clone.ts [--files 20000] [--reps 5]
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { execShell } from "../src/exec/index.js";
import { buildCleanClone, git, HARNESS_IDENTITY } from "../src/workspace/index.js";

const { values } = parseArgs({ options: { files: { type: "string", default: "20000" }, reps: { type: "string", default: "5" } } });
const FILES = Number(values.files);
const REPS = Number(values.reps);
const PER_DIR = 100;

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function generate(root: string): Promise<string> {
  const repo = join(root, "target");
  mkdirSync(repo);
  await git(["init", "-q"], { cwd: repo });
  for (let index = 0; index < FILES; index += 1) {
    const dir = join(repo, `pkg${Math.floor(index / PER_DIR)}`);
    if (index % PER_DIR === 0) mkdirSync(dir);
    writeFileSync(join(dir, `file${index}.txt`), `file ${index}\n${"line of text\n".repeat(index % 7)}`);
  }
  writeFileSync(join(repo, "blob.bin"), Buffer.alloc(64 * 1024, 7));
  writeFileSync(join(repo, ".gitignore"), "node_modules/\n");
  await git(["add", "-A"], { cwd: repo });
  await git(["commit", "-q", "-m", "generated"], { cwd: repo, env: HARNESS_IDENTITY });
  // Packed, as a real repository mostly is; 40,000 loose objects would time file copying instead.
  await git(["repack", "-adq"], { cwd: repo });
  // The modest change: 60 edits, 5 deletions, a mode change, a binary edit, 10 new files.
  const dirs = Math.ceil(FILES / PER_DIR);
  for (let index = 0; index < 60; index += 1) {
    const dir = index % dirs;
    writeFileSync(join(repo, `pkg${dir}`, `file${dir * PER_DIR}.txt`), `edited ${index}\n`);
  }
  for (let index = 0; index < 5; index += 1) unlinkSync(join(repo, `pkg${index}`, `file${index * PER_DIR + 1}.txt`));
  chmodSync(join(repo, "pkg0", "file2.txt"), 0o755);
  const blob = Buffer.alloc(64 * 1024, 7);
  blob.fill(9, 1000, 2000);
  writeFileSync(join(repo, "blob.bin"), blob);
  mkdirSync(join(repo, "new"));
  for (let index = 0; index < 10; index += 1) writeFileSync(join(repo, "new", `added ${index}.txt`), `new ${index}\n`);
  mkdirSync(join(repo, "node_modules"));
  writeFileSync(join(repo, "node_modules", "dep.js"), "module.exports = 1;\n");
  return repo;
}

const RAW_SCRIPT = `set -e
git clone -q --no-hardlinks "$TARGET" "$CLONE"
git -C "$TARGET" diff --binary HEAD | git -C "$CLONE" apply
cd "$TARGET" && git ls-files --others --exclude-standard -z | xargs -0 -r cp -P -p --parents -t "$CLONE"
git -C "$CLONE" add -A
git -C "$CLONE" commit -q -m raw`;

async function timeHarness(repo: string, root: string): Promise<number> {
  const started = performance.now();
  const scratch = mkdtempSync(join(root, "harness-"));
  await buildCleanClone({ repo, scratchDir: scratch });
  const elapsed = performance.now() - started;
  rmSync(scratch, { recursive: true, force: true });
  return elapsed;
}

async function timeRaw(repo: string, root: string): Promise<number> {
  const started = performance.now();
  const scratch = mkdtempSync(join(root, "raw-"));
  const result = await execShell(RAW_SCRIPT, { cwd: scratch, env: { set: { ...HARNESS_IDENTITY, TARGET: repo, CLONE: join(scratch, "clone") } } });
  const elapsed = performance.now() - started;
  if (result.exitCode !== 0) throw new Error(`raw steps failed: ${result.tail}`);
  rmSync(scratch, { recursive: true, force: true });
  return elapsed;
}

async function timeWorktree(repo: string, root: string): Promise<number> {
  const path = join(root, "worktree");
  const started = performance.now();
  await git(["worktree", "add", "-q", "--detach", path, "HEAD"], { cwd: repo });
  const elapsed = performance.now() - started;
  await git(["worktree", "remove", "--force", path], { cwd: repo });
  return elapsed;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "bench-clean-clone-"));
  try {
    const repo = await generate(root);
    const samples = { harness: [] as number[], raw: [] as number[], worktree: [] as number[] };
    const runners = { harness: timeHarness, raw: timeRaw, worktree: timeWorktree };
    const order = ["harness", "raw", "worktree"] as const;
    await timeHarness(repo, root); // warm the page cache for everyone
    for (let rep = 0; rep < REPS; rep += 1) {
      for (let step = 0; step < order.length; step += 1) {
        const name = order[(rep + step) % order.length] ?? "harness";
        samples[name].push(await runners[name](repo, root));
      }
    }
    const harness = median(samples.harness);
    const raw = median(samples.raw);
    const worktree = median(samples.worktree);
    console.log(`files: ${FILES}, repetitions: ${REPS}`);
    const range = (series: number[]): string => `${Math.min(...series).toFixed(0)}–${Math.max(...series).toFixed(0)} ms`;
    console.log(`median harness construction: ${harness.toFixed(0)} ms, raw steps: ${raw.toFixed(0)} ms, worktree add: ${worktree.toFixed(0)} ms`);
    console.log(`ranges: harness ${range(samples.harness)}, raw ${range(samples.raw)}, worktree ${range(samples.worktree)}`);
    // Neighbours in time share the machine's load, so per-repetition ratios drift less than medians.
    const paired = median(samples.harness.map((value, rep) => value / (samples.raw[rep] ?? value)));
    console.log(`ratio harness / raw: ${(harness / raw).toFixed(3)} of medians, ${paired.toFixed(3)} median of paired repetitions (target <= 1.15)`);
    console.log(`construction as a share of worktree add: ${(harness / worktree).toFixed(2)}x`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
