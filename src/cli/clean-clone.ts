import type { CliIO } from "./usage.js";

/** `harness clean-clone`: not built yet. */
export async function cleanCloneCommand(_args: string[], io: CliIO): Promise<number> {
  io.stderr("harness clean-clone: not available yet\n");
  return 2;
}
