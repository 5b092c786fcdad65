import type { CliIO } from "./usage.js";

/** `harness serve`: not built yet. */
export async function serveCommand(_args: string[], io: CliIO): Promise<number> {
  io.stderr("harness serve: not available yet\n");
  return 2;
}
