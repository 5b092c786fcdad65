/** Where the harness keeps its own data: caches shared between worktrees, logs. */
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** The package managers whose caches the harness keeps under its data directory. */
export type CacheTool = "npm" | "pnpm" | "yarn" | "cargo" | "pip" | "uv" | "poetry";

/**
 * The harness's data directory: `HARNESS_HOME` when set (resolved to an absolute path),
 * otherwise `~/.harness`.
 */
export function harnessHome(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.HARNESS_HOME;
  if (configured !== undefined && configured.trim() !== "") return resolve(configured);
  return join(env.HOME !== undefined && env.HOME !== "" ? env.HOME : homedir(), ".harness");
}

/** The cache folder of one package manager, shared by every worktree provisioned from `home`. */
export function cacheDir(home: string, tool: CacheTool): string {
  return join(home, "cache", tool);
}

/** The folder of the harness's own log files. */
export function logsDir(home: string): string {
  return join(home, "logs");
}
