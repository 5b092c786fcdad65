/**
 * Start-up: the compiled `harness` command (`--help`, and `validate` of the default workflow,
 * which loads the schemas) against `node -e 0` in the same run, interleaved per repetition.
 * The target is ≤ 1.5× `node -e 0` plus the time to read the command's modules; the second
 * line separates that reading time by measuring `node -e 'await import(dist/cli.js)'`.
 *
 *   npm run bench -- startup [--reps 21]
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { exec } from "../src/exec/index.js";
import { formatPaired, measurePaired } from "./lib/paired.js";

const { values } = parseArgs({ options: { reps: { type: "string", default: "21" } } });
const REPS = Number(values.reps);
const ROOT = resolve(".");
const BIN = join(ROOT, "bin/harness.js");

function timed(argv: string[]): () => Promise<number> {
  return async () => {
    const started = performance.now();
    const result = await exec(argv, { cwd: ROOT, timeoutMs: 60_000 });
    if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${String(result.exitCode)}: ${result.tail}`);
    return performance.now() - started;
  };
}

const node = timed([process.execPath, "-e", "0"]);
const help = timed([process.execPath, BIN, "--help"]);
const validate = timed([process.execPath, BIN, "validate", join(ROOT, "workflows/story-workflow.json")]);
const importOnly = timed([process.execPath, "--input-type=module", "-e", `await import(${JSON.stringify(join(ROOT, "dist/cli.js"))})`]);

console.log(`reps=${REPS} (compiled JavaScript from dist/)`);
console.log(formatPaired("harness --help ÷ node -e 0", await measurePaired(help, node, REPS), { max: 1.5 }));
console.log(formatPaired("import of dist/cli.js ÷ node -e 0", await measurePaired(importOnly, node, REPS)));
console.log(formatPaired("harness validate <workflow> ÷ node -e 0", await measurePaired(validate, node, REPS)));
