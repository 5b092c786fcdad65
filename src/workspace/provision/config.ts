/**
 * The provisioning settings a repository may give (`provision.command`, its timeout, extra
 * environment names), checked before anything runs.
 */
import type { EnvSpec } from "../../exec/index.js";
import type { FailureClass } from "../../failure/index.js";

/** How long one provisioning attempt may run unless the repository says otherwise. */
export const DEFAULT_PROVISION_TIMEOUT_MS = 600_000;

/** Provisioning settings from the repository's configuration. */
export interface ProvisionConfig {
  /** A command string run as `/bin/sh -lc <command>`; wins over every other rung. */
  command?: string;
  /** Milliseconds one attempt may take; a positive integer. */
  timeoutMs?: number;
  /** Environment names (and values) the provisioning child gets beyond the allowlist. */
  env?: EnvSpec;
}

/** Provisioning settings with defaults applied, known to be valid. */
export interface ProvisionSettings {
  command?: string;
  timeoutMs: number;
  env: EnvSpec;
}

/** A provisioning setting is unusable; names the field and the value. Nothing ran. */
export class ProvisionConfigError extends Error {
  readonly failureClass = "config-invalid" satisfies FailureClass;
  constructor(
    readonly field: string,
    readonly value: unknown,
    reason: string,
  ) {
    super(`provision.${field} ${reason}, got ${describe(value)}`);
    this.name = "ProvisionConfigError";
  }
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Checks `config` and applies defaults. The values may come from YAML, so their types are
 * checked at run time: an explicit command must be a non-empty string and a timeout a
 * positive integer. Throws {@link ProvisionConfigError}.
 */
export function validateProvisionConfig(config: ProvisionConfig | undefined): ProvisionSettings {
  // Nothing (undefined or YAML's null) means the defaults.
  const raw: Record<string, unknown> = (config ?? {}) as Record<string, unknown>;
  if (typeof raw !== "object" || Array.isArray(raw)) throw new ProvisionConfigError("", raw, "must be an object");
  const settings: ProvisionSettings = { timeoutMs: DEFAULT_PROVISION_TIMEOUT_MS, env: {} };

  if (raw.command !== undefined) {
    if (typeof raw.command !== "string") throw new ProvisionConfigError("command", raw.command, "must be a string");
    if (raw.command.trim() === "") throw new ProvisionConfigError("command", raw.command, "must not be empty");
    settings.command = raw.command;
  }
  if (raw.timeoutMs !== undefined) {
    const timeout = raw.timeoutMs;
    // Only a number is a safe integer, so this refuses every other type too.
    if (!Number.isSafeInteger(timeout) || Number(timeout) <= 0) {
      throw new ProvisionConfigError("timeoutMs", timeout, "must be a positive integer of milliseconds");
    }
    settings.timeoutMs = Number(timeout);
  }
  if (raw.env !== undefined) settings.env = validateEnv(raw.env);
  return settings;
}

function validateEnv(env: unknown): EnvSpec {
  if (typeof env !== "object" || env === null || Array.isArray(env)) throw new ProvisionConfigError("env", env, "must be an object");
  const { allow, set } = env as Record<string, unknown>;
  const spec: EnvSpec = {};
  if (allow !== undefined) {
    if (!Array.isArray(allow) || !allow.every((name) => typeof name === "string" && name !== "")) {
      throw new ProvisionConfigError("env.allow", allow, "must be a list of variable names");
    }
    spec.allow = allow as string[];
  }
  if (set !== undefined) {
    if (typeof set !== "object" || set === null || Array.isArray(set) || !Object.values(set).every((value) => typeof value === "string")) {
      throw new ProvisionConfigError("env.set", set, "must map names to string values");
    }
    spec.set = set as Record<string, string>;
  }
  return spec;
}
