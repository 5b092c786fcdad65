import type { CliIO } from "./usage.js";

/** `harness run`: not built yet. */
export async function runCommand(_args: string[], io: CliIO): Promise<number> {
  io.stderr("harness run: not available yet\n");
  return 2;
}
