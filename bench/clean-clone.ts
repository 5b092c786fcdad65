/**
 * Clean-clone construction against the raw git floor and against `git worktree add`, per repository size and change.
 *
 * Cells: generated repositories of 1,000, 20,000 and 80,000 files (packed, as real ones mostly
 * are), each with four changes in turn: 1 edited file, 1,000 edited files, 10,000 edited files
 * (where the repository has that many) and 5,000 untracked files. In every repetition the three
 * sides run one after the other in rotating order (A B C, C A B, B C A, …), so load on the shared
 * machine hits all alike:
 *   harness  — mkdtemp + buildCleanClone: everything before the suite starts (the user's commit
 *              built on a scratch index, the clone, the checkout of that commit, links);
 *   floor    — one shell script: git clone --no-hardlinks, git diff --binary HEAD | git apply,
 *              copy of the untracked files, git add -A, git commit (what construction used to be);
 *   worktree — git worktree add --detach of the same repository.
 * Clean-up happens outside the timings. Each ratio is the median of the per-repetition ratios,
 * with their range.
 *
 * Run: npm run bench -- clean-clone [--sizes 1000,20000,80000] [--changes 1,1000,10000,untracked] [--reps 3] [--large-reps 2] [--skip-warmup] [--samples] [--settle]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { exec, execShell } from "../src/exec/index.js";
import { buildCleanClone, git, HARNESS_IDENTITY } from "../src/workspace/index.js";
import { summarisePairs, type PairedResult } from "./lib/paired.js";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,20000,80000" },
    changes: { type: "string", default: "1,1000,10000,untracked" },
    reps: { type: "string", default: "3" },
    "large-reps": { type: "string", default: "2" },
    // The generated target is in the page cache already; skipping the warm-up leaves a large cell's time to measured pairs.
    "skip-warmup": { type: "boolean", default: false },
    // Prints each cell's raw samples (seconds, in repetition order) after its row, for a look at the spread.
    samples: { type: "boolean", default: false },
    // Flushes dirty pages (sync) after each side's clean-up, so no side pays for the previous one's writeback.
    settle: { type: "boolean", default: false },
  },
});
const SIZES = (values.sizes ?? "").split(",").map(Number);
const REPS = Number(values.reps);
const LARGE_REPS = Number(values["large-reps"]);
const PER_DIR = 100;

interface Change {
  /** Its name for `--changes`. */
  key: string;
  label: string;
  edits: number;
  untracked: number;
}
const CHANGES: readonly Change[] = [
  { key: "1", label: "1 edit", edits: 1, untracked: 0 },
  { key: "1000", label: "1,000 edits", edits: 1000, untracked: 0 },
  { key: "10000", label: "10,000 edits", edits: 10000, untracked: 0 },
  { key: "untracked", label: "5,000 untracked", edits: 0, untracked: 5000 },
];
const CHOSEN = new Set((values.changes ?? "").split(","));

const filePath = (repo: string, index: number): string => join(repo, `pkg${Math.floor(index / PER_DIR)}`, `file${index}.txt`);

async function generate(root: string, files: number): Promise<string> {
  const repo = join(root, `target-${files}`);
  mkdirSync(repo);
  await git(["init", "-q"], { cwd: repo });
  for (let index = 0; index < files; index += 1) {
    if (index % PER_DIR === 0) mkdirSync(join(repo, `pkg${index / PER_DIR}`));
    writeFileSync(filePath(repo, index), `file ${index}\n${"line of text\n".repeat(index % 7)}`);
  }
  writeFileSync(join(repo, ".gitignore"), "node_modules/\n");
  await git(["add", "-A"], { cwd: repo });
  await git(["commit", "-q", "-m", "generated"], { cwd: repo, env: HARNESS_IDENTITY });
  await git(["repack", "-adq"], { cwd: repo });
  mkdirSync(join(repo, "node_modules"));
  writeFileSync(join(repo, "node_modules", "dep.js"), "module.exports = 1;\n");
  return repo;
}

/** Applies `change` to the clean working tree of `repo`, spreading edits over the whole tree. */
function applyChange(repo: string, files: number, change: Change): void {
  const stride = Math.max(1, Math.floor(files / change.edits));
  for (let made = 0; made < change.edits; made += 1) writeFileSync(filePath(repo, (made * stride) % files), `edited ${made}\n`);
  for (let index = 0; index < change.untracked; index += 1) {
    if (index % PER_DIR === 0) mkdirSync(join(repo, `new${index / PER_DIR}`));
    writeFileSync(join(repo, `new${Math.floor(index / PER_DIR)}`, `added ${index}.txt`), `new ${index}\n`);
  }
}

async function revertChange(repo: string): Promise<void> {
  await git(["reset", "-q", "--hard"], { cwd: repo });
  await git(["clean", "-fdq"], { cwd: repo });
}

const FLOOR_SCRIPT = `set -e
git clone -q --no-hardlinks "$TARGET" "$CLONE"
git -C "$TARGET" diff --binary HEAD > "$PWD/change.patch"
if [ -s "$PWD/change.patch" ]; then git -C "$CLONE" apply "$PWD/change.patch"; fi
cd "$TARGET" && git ls-files --others --exclude-standard -z | xargs -0 -r cp -P -p --parents -t "$CLONE"
git -C "$CLONE" add -A
git -C "$CLONE" -c gc.auto=0 commit -q -m floor`;

type Side = "harness" | "floor" | "worktree";

async function timeSide(side: Side, repo: string, root: string): Promise<number> {
  const scratch = mkdtempSync(join(root, `${side}-`));
  try {
    const started = performance.now();
    if (side === "harness") {
      await buildCleanClone({ repo, scratchDir: scratch });
    } else if (side === "floor") {
      const result = await execShell(FLOOR_SCRIPT, { cwd: scratch, env: { set: { ...HARNESS_IDENTITY, TARGET: repo, CLONE: join(scratch, "clone") } } });
      if (result.exitCode !== 0) throw new Error(`floor steps failed: ${result.tail}`);
    } else {
      await git(["worktree", "add", "-q", "--detach", join(scratch, "wt"), "HEAD"], { cwd: repo });
    }
    const elapsed = performance.now() - started;
    if (side === "worktree") await git(["worktree", "remove", "--force", join(scratch, "wt")], { cwd: repo });
    return elapsed;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    // Outside the timing: the writes and the removal of this side are flushed here, not during the next side's timing.
    if (values.settle === true) await exec(["sync"], { cwd: root });
  }
}

const ORDERS: readonly (readonly Side[])[] = [
  ["harness", "floor", "worktree"],
  ["worktree", "harness", "floor"],
  ["floor", "worktree", "harness"],
];

async function measureCell(repo: string, root: string, reps: number): Promise<{ floor: PairedResult; worktree: PairedResult }> {
  if (values["skip-warmup"] !== true) for (const side of ["floor", "harness", "worktree"] as const) await timeSide(side, repo, root);
  const samples: Record<Side, number[]> = { harness: [], floor: [], worktree: [] };
  const before = loadavg()[0] ?? 0;
  for (let rep = 0; rep < reps; rep += 1) {
    for (const side of ORDERS[rep % ORDERS.length] ?? []) samples[side].push(await timeSide(side, repo, root));
  }
  const load = { before, after: loadavg()[0] ?? 0 };
  return { floor: summarisePairs(samples.harness, samples.floor, load), worktree: summarisePairs(samples.harness, samples.worktree, load) };
}

const ms = (value: number): string => `${(value / 1000).toFixed(2)} s`;
const ratio = (result: PairedResult): string =>
  `${result.medianRatio.toFixed(2)}× (${result.minRatio.toFixed(2)}–${result.maxRatio.toFixed(2)})${result.inconclusive ? " inconclusive" : ""}`;

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "bench-clean-clone-"));
  try {
    // "floor spread" is how far the floor moved between neighbouring repetitions, over its median
    // (bench/lib/paired.ts): the verdict is inconclusive when it is more than the effect, |1 − harness / floor|.
    console.log("| files | change | harness | floor | harness / floor | floor spread | worktree add | harness / worktree | n | load |");
    console.log("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for (const files of SIZES) {
      const repo = await generate(root, files);
      const reps = files >= 80_000 ? LARGE_REPS : REPS;
      for (const change of CHANGES) {
        if (change.edits > files || !CHOSEN.has(change.key)) continue;
        applyChange(repo, files, change);
        const cell = await measureCell(repo, root, reps);
        await revertChange(repo);
        const target = cell.floor.medianRatio <= 1 ? "" : " ✗";
        console.log(
          `| ${files.toLocaleString("en")} | ${change.label} | ${ms(cell.floor.medianSubjectMs)} | ${ms(cell.floor.medianBaselineMs)} | ${ratio(cell.floor)}${target} | ${(cell.floor.baselineSpread * 100).toFixed(0)} % | ` +
            `${ms(cell.worktree.medianBaselineMs)} | ${ratio(cell.worktree)} | ${cell.floor.reps} | ${cell.floor.load.before.toFixed(1)}→${cell.floor.load.after.toFixed(1)} |`,
        );
        if (values.samples === true) {
          const list = (samples: readonly number[]): string => samples.map((value) => (value / 1000).toFixed(2)).join(" ");
          console.log(`<!-- harness: ${list(cell.floor.subjectMs)} | floor: ${list(cell.floor.baselineMs)} | worktree: ${list(cell.worktree.baselineMs)} -->`);
        }
      }
      rmSync(repo, { recursive: true, force: true });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
