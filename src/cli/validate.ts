import type { CliIO } from "./usage.js";

/** `harness validate`: not built yet. */
export async function validateCommand(_args: string[], io: CliIO): Promise<number> {
  io.stderr("harness validate: not available yet\n");
  return 2;
}
