import type { CliIO } from "./usage.js";

/** `harness provision`: not built yet. */
export async function provisionCommand(_args: string[], io: CliIO): Promise<number> {
  io.stderr("harness provision: not available yet\n");
  return 2;
}
