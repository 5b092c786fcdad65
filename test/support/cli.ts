/** `harness` run in this process (`main` of src/cli.ts) with its output captured. */
import { main } from "../../src/cli.js";
import type { CliIO } from "../../src/cli/usage.js";

/** The exit code and everything printed on each stream. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `harness <argv…>` in `cwd` with `env`, capturing what it prints. */
export async function runCli(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
  const printed = { stdout: "", stderr: "" };
  const io: CliIO = { cwd, env, stdout: (text) => void (printed.stdout += text), stderr: (text) => void (printed.stderr += text) };
  const code = await main([...argv], io);
  return { code, ...printed };
}
