/**
 * Builds dist/ before the suite: tests that start `bin/harness.js` (the App, the CLI) run the
 * compiled JavaScript a user runs, so it must match the sources under test. The build is
 * incremental, so an unchanged tree costs a few seconds. Plain JavaScript, because Jest loads
 * a global setup before any TypeScript transform applies; that is also why it may not use
 * src/exec and calls child_process itself (eslint allows it for this file only).
 *
 * Under mutation testing (`npm run mutate`) the suite runs once per mutant: the build is made
 * once, and later runs use it (the mutants live in the instrumented sources jest runs, not in
 * dist/, which only child processes load, where no mutant is active).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export default function buildDist() {
  const root = fileURLToPath(new URL("..", import.meta.url));
  if (process.env.STRYKER_MUTATOR_WORKER !== undefined && existsSync(join(root, "dist", "cli.js"))) return;
  const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
  try {
    execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 });
  } catch (error) {
    const output = `${error.stdout ?? ""}${error.stderr ?? ""}`;
    throw new Error(`The build (npm run build) failed before the tests:\n${output}`);
  }
}
