/**
 * The test-integrity gate's own time against `git diff --stat` of the same change, on a 20,000-file repository.
 *
 * A generated, packed repository of 20,000 JavaScript files (a test file for every tenth, the
 * rest code), and changes of 1, 100 and 1,000 edited files spread over the tree, each left in
 * the working tree as an agent leaves it (half of the edited files are test files gaining a
 * case, half code files gaining a line). Subject and baseline run interleaved (A B B A), in the
 * same working tree, in the same run:
 *   gate     — readWorkChange (diff-index of the working tree against the base with renames,
 *              ls-files of the untracked files, the base's side of every file the gate reads
 *              through one cat-file, the work's side through the bounded reader)
 *              + judgeChange (every counter over both sides);
 *   baseline — `git diff --stat <base>` of the same working tree.
 * Target: the gate ≤ 2× the baseline in every cell.
 *
 * Run: npm run bench -- integrity [--files 20000] [--changes 1,100,1000] [--reps 7]
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { judgeChange, readWorkChange } from "../src/integrity/index.js";
import { git, HARNESS_IDENTITY } from "../src/workspace/index.js";
import { formatPaired, measurePaired } from "./lib/paired.js";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "20000" },
    changes: { type: "string", default: "1,100,1000" },
    reps: { type: "string", default: "7" },
  },
});
const FILES = Number(values.files);
const CHANGES = (values.changes ?? "").split(",").map(Number);
const REPS = Number(values.reps);
const PER_DIR = 100;

const isTest = (index: number): boolean => index % 10 === 0;
const pathOf = (index: number): string => `pkg${Math.floor(index / PER_DIR)}/${isTest(index) ? `case${index}.test.js` : `code${index}.js`}`;

function content(index: number): string {
  if (isTest(index))
    return `const { f${index + 1} } = require("./code${index + 1}.js");\n\ntest("f${index + 1} doubles", () => {\n  expect(f${index + 1}(2)).toBe(4);\n});\n`;
  return `/** Doubles its argument. */\nfunction f${index}(x) {\n  return x * 2;\n}\n\nmodule.exports = { f${index} };\n`;
}

async function generate(root: string): Promise<{ repo: string; base: string }> {
  const repo = join(root, "repo");
  mkdirSync(repo);
  await git(["init", "-q"], { cwd: repo });
  for (let index = 0; index < FILES; index += 1) {
    if (index % PER_DIR === 0) mkdirSync(join(repo, `pkg${index / PER_DIR}`));
    writeFileSync(join(repo, pathOf(index)), content(index));
  }
  writeFileSync(join(repo, "package.json"), `${JSON.stringify({ name: "generated", scripts: { test: "jest" } }, null, 2)}\n`);
  await git(["add", "-A"], { cwd: repo });
  await git(["commit", "-q", "-m", "generated"], { cwd: repo, env: HARNESS_IDENTITY });
  await git(["repack", "-adq"], { cwd: repo });
  return { repo, base: await git(["rev-parse", "HEAD"], { cwd: repo, readOnly: true }) };
}

/** Edits `count` files spread over the tree, half test files (a case added), half code (a line added). */
function applyChange(repo: string, count: number): void {
  const step = Math.max(1, Math.floor(FILES / count));
  for (let edited = 0; edited < count; edited += 1) {
    const index = Math.min(FILES - 1, edited * step + (edited % 2 === 0 ? 0 : 1));
    const extra = isTest(index) ? `\ntest("still doubles ${edited}", () => {\n  expect(2 * 2).toBe(4);\n});\n` : `// edited ${edited}\n`;
    appendFileSync(join(repo, pathOf(index)), extra);
  }
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "harness-bench-integrity-"));
  try {
    const load = readFileSync("/proc/loadavg", "utf8").trim();
    process.stdout.write(`integrity gate vs git diff --stat, ${FILES.toLocaleString("en")} files, ${REPS} pairs per cell, /proc/loadavg at start: ${load}\n`);
    const { repo, base } = await generate(root);
    for (const count of CHANGES) {
      await git(["checkout", "-q", "--", "."], { cwd: repo });
      applyChange(repo, count);
      let findings = -1;
      let files = -1;
      const gate = async (): Promise<number> => {
        const started = performance.now();
        const changes = await readWorkChange({ worktree: repo, base });
        const verdict = judgeChange(changes, {}, { allowed: () => false, workflows: "hold" });
        const elapsed = performance.now() - started;
        findings = verdict.findings.length;
        files = verdict.files;
        return elapsed;
      };
      const diffStat = async (): Promise<number> => {
        const started = performance.now();
        await git(["diff", "--stat", "--no-ext-diff", "--no-textconv", base], { cwd: repo, readOnly: true });
        return performance.now() - started;
      };
      const result = await measurePaired(gate, diffStat, REPS);
      const after = readFileSync("/proc/loadavg", "utf8").trim();
      process.stdout.write(
        `${formatPaired(`${count} file(s) changed (gate saw ${files}, ${findings} findings)`, result, { max: 2 })}; /proc/loadavg ${after}\n`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
