/**
 * The clean clone's comparison of a linked node_modules with its lockfile, for pnpm and yarn against npm's (the baseline).
 *
 * Each project has `--packages` direct dependencies, installed and locked alike (the comparison
 * finds them matching, its slowest path: every package is looked at). pnpm's reads two YAML
 * lockfiles (the committed one and `.pnpm/lock.yaml`) and the top's symlinks; classic yarn's
 * its own lockfile format and every package's package.json; npm's two JSON files.
 *
 *   npm run bench -- lockfile-compare [--packages 3000] [--reps 6]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { compareInstallWithLock } from "../src/workspace/clean-clone/installed-vs-lock.js";
import { pnpmProject } from "../test/workspace/pnpm-layout.js";
import { formatPaired, measurePaired } from "./lib/paired.js";

const { values } = parseArgs({ options: { packages: { type: "string", default: "3000" }, reps: { type: "string", default: "6" } } });
const PACKAGES = Number(values.packages);
const REPS = Number(values.reps);
const names = Array.from({ length: PACKAGES }, (_, index) => `pkg-${index}`);

function npmProject(dir: string): void {
  const packages = Object.fromEntries(names.map((name) => [`node_modules/${name}`, { version: "1.0.0", resolved: `file:${name}.tgz` }]));
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify({ lockfileVersion: 3, packages: { "": {}, ...packages } }));
  mkdirSync(join(dir, "node_modules"));
  writeFileSync(join(dir, "node_modules", ".package-lock.json"), JSON.stringify({ lockfileVersion: 3, packages }));
}

function yarnProject(dir: string): void {
  const lock = ["# yarn lockfile v1", "", ...names.flatMap((name) => [`${name}@^1.0.0:`, '  version "1.0.0"', "  integrity sha512-AAAA", ""])];
  writeFileSync(join(dir, "yarn.lock"), lock.join("\n"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ dependencies: Object.fromEntries(names.map((name) => [name, "^1.0.0"])) }));
  for (const name of names) {
    mkdirSync(join(dir, "node_modules", name), { recursive: true });
    writeFileSync(join(dir, "node_modules", name, "package.json"), JSON.stringify({ name, version: "1.0.0" }));
  }
  writeFileSync(join(dir, "node_modules", ".yarn-integrity"), JSON.stringify({ linkedModules: [] }));
}

const root = mkdtempSync(join(tmpdir(), "harness-bench-lock-"));
try {
  const dirs = { npm: join(root, "npm"), pnpm: join(root, "pnpm"), yarn: join(root, "yarn") };
  for (const dir of Object.values(dirs)) mkdirSync(dir);
  npmProject(dirs.npm);
  pnpmProject(
    dirs.pnpm,
    9,
    names.map((name) => ({ name, version: "1.0.0" })),
    names.map((name) => `${name}@1.0.0`),
  );
  yarnProject(dirs.yarn);
  const timed = (dir: string) => async (): Promise<number> => {
    const started = performance.now();
    const result = await compareInstallWithLock(join(dir, "node_modules"), dir);
    if (result.state !== "matches") throw new Error(`${dir}: expected a match, got ${JSON.stringify(result).slice(0, 300)}`);
    return performance.now() - started;
  };
  process.stdout.write(`${formatPaired(`pnpm vs npm, ${PACKAGES} packages`, await measurePaired(timed(dirs.pnpm), timed(dirs.npm), REPS))}\n`);
  process.stdout.write(`${formatPaired(`yarn vs npm, ${PACKAGES} packages`, await measurePaired(timed(dirs.yarn), timed(dirs.npm), REPS))}\n`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
