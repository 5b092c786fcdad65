/**
 * How the sandbox is configured. The operator decides through the App's environment; a caller
 * may pass its own settings (a test, a benchmark), never weaker ones by accident: the default
 * is on, and off is only ever an explicit `HARNESS_SANDBOX=off`.
 */
import { isAbsolute } from "node:path";
import { netSettingsFromEnv, type NetSettings } from "./net-settings.js";
import { SandboxSettingsError } from "./settings-error.js";

export { SandboxSettingsError };

/** The sandbox's settings, as read from the environment by {@link sandboxSettingsFromEnv}. */
export interface SandboxSettings {
  /** False only when the operator set `HARNESS_SANDBOX=off`. */
  enabled: boolean;
  /** Extra folders every step may read (for example where agent CLIs are installed). */
  readPaths: readonly string[];
  /** Extra folders every step may write; empty unless the operator names some. */
  writePaths: readonly string[];
  /** Most processes the sandbox user may run (RLIMIT_NPROC inside the sandbox). */
  maxProcesses: number;
  /** Most bytes of data memory each process may use (RLIMIT_DATA inside the sandbox). */
  memoryBytes: number;
  /** Most bytes a step's log keeps: its head and its tail, with a note saying it was cut. */
  logCapBytes: number;
  /** How networked steps reach the network: their own namespace (the default), through an egress proxy, or the host's. */
  net: NetSettings;
}

export const DEFAULT_MAX_PROCESSES = 2048;
export const DEFAULT_MEMORY_MB = 8192;
export const DEFAULT_LOG_CAP_MB = 64;

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new SandboxSettingsError(name, raw, "must be a positive integer");
  return value;
}

function paths(env: NodeJS.ProcessEnv, name: string): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return [];
  const list = raw.split(":").filter((entry) => entry !== "");
  for (const entry of list)
    if (!isAbsolute(entry)) throw new SandboxSettingsError(name, raw, `must list absolute paths separated by ':' (${entry} is not absolute)`);
  return list;
}

/**
 * Reads `HARNESS_SANDBOX` (`on`, the default, or `off`), `HARNESS_SANDBOX_READ` and
 * `HARNESS_SANDBOX_WRITE` (absolute paths separated by `:`), `HARNESS_SANDBOX_MAX_PROCESSES`,
 * `HARNESS_SANDBOX_MEMORY_MB`, `HARNESS_LOG_CAP_MB`, and the network's `HARNESS_SANDBOX_NET`,
 * `HARNESS_NET_ALLOW` and `HARNESS_EGRESS_ALLOW`. Throws {@link SandboxSettingsError}
 * naming the variable that cannot be used.
 */
export function sandboxSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): SandboxSettings {
  const mode = (env.HARNESS_SANDBOX ?? "on").trim().toLowerCase();
  if (mode !== "on" && mode !== "off" && mode !== "") throw new SandboxSettingsError("HARNESS_SANDBOX", env.HARNESS_SANDBOX ?? "", "must be 'on' or 'off'");
  return {
    enabled: mode !== "off",
    readPaths: paths(env, "HARNESS_SANDBOX_READ"),
    writePaths: paths(env, "HARNESS_SANDBOX_WRITE"),
    maxProcesses: positive(env, "HARNESS_SANDBOX_MAX_PROCESSES", DEFAULT_MAX_PROCESSES),
    memoryBytes: positive(env, "HARNESS_SANDBOX_MEMORY_MB", DEFAULT_MEMORY_MB) * 1024 * 1024,
    logCapBytes: positive(env, "HARNESS_LOG_CAP_MB", DEFAULT_LOG_CAP_MB) * 1024 * 1024,
    net: netSettingsFromEnv(env),
  };
}
