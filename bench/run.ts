/**
 * `npm run bench -- <name> [args…]` runs `bench/<name>.ts` with its own arguments;
 * `npm run bench` alone lists the benchmarks with the first line of each one's description.
 * The benchmark runs in this process, exactly as `node --import tsx bench/<name>.ts` would.
 * `npm run bench -- <name> --help` prints the benchmark's usage line without running it; an
 * option it does not take is told in one line (exit 2), not as a stack trace.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { argumentError, asksForHelp, usageOf } from "./lib/usage.js";

const BENCH_DIR = fileURLToPath(new URL(".", import.meta.url));

/** Every runnable benchmark: the .ts files of bench/ itself, not its helpers. */
export function listBenchmarks(): { name: string; summary: string }[] {
  return readdirSync(BENCH_DIR)
    .filter((file) => file.endsWith(".ts") && file !== "run.ts")
    .sort()
    .map((file) => {
      const doc = /\/\*\*\s*\n\s*\*\s*(.+)/.exec(readFileSync(`${BENCH_DIR}${file}`, "utf8"));
      return { name: file.replace(/\.ts$/, ""), summary: doc?.[1]?.trim() ?? "" };
    });
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const benches = listBenchmarks();
  if (name === undefined || name === "--help" || name === "-h") {
    process.stdout.write(`usage: npm run bench -- <name> [args…]\n\n${benches.map((b) => `  ${b.name.padEnd(20)} ${b.summary}`).join("\n")}\n`);
    return 0;
  }
  if (!benches.some((bench) => bench.name === name)) {
    process.stderr.write(`bench: no benchmark '${name}' in bench/ (known: ${benches.map((b) => b.name).join(", ")})\n`);
    return 2;
  }
  const file = `${BENCH_DIR}${name}.ts`;
  const usage = usageOf(name, readFileSync(file, "utf8"));
  if (asksForHelp(rest)) {
    process.stdout.write(`usage: ${usage}\n`);
    return 0;
  }
  // In-process, as if started directly: each benchmark reads its flags from process.argv.
  process.argv = [process.argv[0] ?? process.execPath, file, ...rest];
  try {
    await import(pathToFileURL(file).href);
  } catch (error) {
    const bad = argumentError(error);
    if (bad === undefined) throw error;
    process.stderr.write(`bench ${name}: ${bad}\nusage: ${usage}\n`);
    return 2;
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
