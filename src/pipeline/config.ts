import { parse as parseYaml, YAMLParseError } from "yaml";
import type { AgentLaunch, AgentPreset } from "../agents/index.js";
import { schemas } from "../schema/index.js";
import { ConfigError } from "./errors.js";

/** A per-seat override of the repository's agent. */
export interface SeatOverride extends AgentLaunch {
  /** False: no agent sits in this seat; the stage's gate alone decides. */
  enabled: boolean;
  /** Presets tried in order when the seat's agent is unavailable (replaces `agent.fallback`). */
  fallback?: AgentPreset[];
  timeoutMs?: number;
}

/** The repository configuration (`.github/harness.yml`), normalised to camelCase and milliseconds. */
export interface HarnessConfig {
  /** `fallback`: presets tried in order when the agent is unavailable (rate limited, unreachable, …). */
  agent: AgentLaunch & { env: string[]; timeoutMs: number; fallback?: AgentPreset[] };
  seats: Record<string, SeatOverride>;
  /** `network`: the suite gate and the clean-clone suite get the network (off by default). */
  test: { command?: string; timeoutMs: number; network?: boolean };
  provision: { command?: string; timeoutMs?: number };
  /** Overrides the workflow's attempt ceiling. */
  maxAttempts?: number;
  /** `link` absent: the clean-clone check links its default dependency roots; `[]` links none. */
  cleanClone: CleanCloneConfig;
  /** A story with a plan: how many tasks of a wave run at once. */
  plan: { concurrency?: number };
  /** `iterate`: revisions after the pull request; absent fields take {@link DEFAULT_ITERATE}. */
  iterate?: IterateConfig;
  /** `integrity` of `.github/harness.yml`: findings accepted ahead of the test-integrity gate (none when absent). */
  integrity?: IntegrityConfig;
  /** What the whole story may spend on agents (`budget`); absent keys are unbounded unless the operator sets a ceiling. */
  budget: Budget;
}

/** Limits on what a story's agents spend (the repository's `budget`, or the operator's ceilings). */
export interface Budget {
  maxTurnsPerSeat?: number;
  maxAgentMs?: number;
  maxTokens?: number;
}

/** `integrity` of `.github/harness.yml`, normalised. */
export interface IntegrityConfig {
  /** Globs of files whose findings are accepted. */
  allow: string[];
  /** `allow`: a changed CI workflow is no finding. */
  workflows: "allow" | "hold";
}

/** `iterate` of `.github/harness.yml`: whether reviews and CI failures start revisions, and how many rounds in all. */
export interface IterateConfig {
  reviews: boolean;
  ci: boolean;
  maxRounds: number;
}

/** What a repository that says nothing of `iterate` gets. */
export const DEFAULT_ITERATE: IterateConfig = Object.freeze({ reviews: true, ci: true, maxRounds: 3 });

/** `clean_clone` of `.github/harness.yml`, normalised. */
export interface CleanCloneConfig {
  link?: string[];
  interpreter?: string;
  /** Commits of history in the clean clone (`clean_clone.depth`). */
  depth?: number;
  /** Further variables the clean-clone suite receives (`clean_clone.env`), within the operator's allowlist. */
  env?: string[];
  /** Provision the clean clone instead of linking dependency folders (`clean_clone.provision`). */
  provision?: boolean;
  allowExternalSymlinks?: boolean;
}

const MINUTE = 60_000;

/** What a repository without `.github/harness.yml` gets. */
export const DEFAULT_HARNESS_CONFIG: HarnessConfig = Object.freeze({
  agent: { preset: "claude-code", env: [], timeoutMs: 60 * MINUTE },
  seats: {},
  test: { timeoutMs: 30 * MINUTE },
  provision: {},
  cleanClone: {},
  plan: {},
  budget: {},
}) as HarnessConfig;

interface RawLaunch {
  preset?: AgentPreset;
  fallback?: AgentPreset[];
  command?: string;
  timeout_minutes?: number;
}
interface RawConfig {
  agent?: RawLaunch & { env?: string[] };
  seats?: Record<string, RawLaunch & { enabled?: boolean }>;
  test?: { command?: string; timeout_minutes?: number; network?: boolean };
  provision?: { command?: string; timeout_minutes?: number };
  max_attempts?: number;
  clean_clone?: { link?: string[]; interpreter?: string; depth?: number; env?: string[]; provision?: boolean; allow_external_symlinks?: boolean };
  plan?: { concurrency?: number };
  iterate?: { reviews?: boolean; ci?: boolean; max_rounds?: number };
  integrity?: { allow?: string[]; workflows?: "allow" | "hold" };
  budget?: { max_turns_per_seat?: number; max_agent_minutes?: number; max_tokens?: number };
}

/**
 * Parses the YAML text of `.github/harness.yml` and validates it against
 * `schemas/harness-config.schema.json`. A YAML error or an offending value throws, naming
 * `source` and the JSON path (unknown keys are refused, so a typo is never a silent default).
 */
export function parseHarnessConfig(text: string, source: string): HarnessConfig {
  let data: unknown;
  try {
    data = parseYaml(text, { prettyErrors: true });
  } catch (error) {
    const where = error instanceof YAMLParseError ? ` (line ${error.linePos?.[0]?.line ?? "?"})` : "";
    throw new ConfigError(source, "$", `is not valid YAML${where}: ${(error as Error).message.split("\n")[0] ?? ""}`);
  }
  const raw = schemas().validate<RawConfig | null>("harness-config", data ?? null, source) ?? {};
  const base = DEFAULT_HARNESS_CONFIG;
  const agent: HarnessConfig["agent"] = {
    env: [...(raw.agent?.env ?? [])],
    timeoutMs: minutes(raw.agent?.timeout_minutes) ?? base.agent.timeoutMs,
  };
  if (raw.agent?.fallback !== undefined) agent.fallback = [...raw.agent.fallback];
  if (raw.agent?.command !== undefined) agent.command = raw.agent.command;
  else agent.preset = raw.agent?.preset ?? base.agent.preset;
  const seats: Record<string, SeatOverride> = {};
  for (const [name, seat] of Object.entries(raw.seats ?? {})) {
    const override: SeatOverride = { enabled: seat.enabled ?? true };
    if (seat.preset !== undefined) override.preset = seat.preset;
    if (seat.command !== undefined) override.command = seat.command;
    if (seat.fallback !== undefined) override.fallback = [...seat.fallback];
    const timeout = minutes(seat.timeout_minutes);
    if (timeout !== undefined) override.timeoutMs = timeout;
    seats[name] = override;
  }
  const config: HarnessConfig = {
    agent,
    seats,
    test: { timeoutMs: minutes(raw.test?.timeout_minutes) ?? base.test.timeoutMs },
    provision: {},
    cleanClone: {},
    plan: {},
    budget: {},
  };
  if (raw.budget?.max_turns_per_seat !== undefined) config.budget.maxTurnsPerSeat = raw.budget.max_turns_per_seat;
  const agentMs = minutes(raw.budget?.max_agent_minutes);
  if (agentMs !== undefined) config.budget.maxAgentMs = agentMs;
  if (raw.budget?.max_tokens !== undefined) config.budget.maxTokens = raw.budget.max_tokens;
  if (raw.plan?.concurrency !== undefined) config.plan.concurrency = raw.plan.concurrency;
  if (raw.iterate !== undefined) {
    config.iterate = {
      reviews: raw.iterate.reviews ?? DEFAULT_ITERATE.reviews,
      ci: raw.iterate.ci ?? DEFAULT_ITERATE.ci,
      maxRounds: raw.iterate.max_rounds ?? DEFAULT_ITERATE.maxRounds,
    };
  }
  if (raw.integrity !== undefined) config.integrity = { allow: [...(raw.integrity.allow ?? [])], workflows: raw.integrity.workflows ?? "hold" };
  if (raw.clean_clone?.link !== undefined) config.cleanClone.link = [...raw.clean_clone.link];
  if (raw.test?.command !== undefined) config.test.command = raw.test.command;
  if (raw.test?.network !== undefined) config.test.network = raw.test.network;
  if (raw.provision?.command !== undefined) config.provision.command = raw.provision.command;
  const provisionTimeout = minutes(raw.provision?.timeout_minutes);
  if (provisionTimeout !== undefined) config.provision.timeoutMs = provisionTimeout;
  if (raw.max_attempts !== undefined) config.maxAttempts = raw.max_attempts;
  if (raw.clean_clone?.interpreter !== undefined) config.cleanClone.interpreter = raw.clean_clone.interpreter;
  if (raw.clean_clone?.depth !== undefined) config.cleanClone.depth = raw.clean_clone.depth;
  if (raw.clean_clone?.env !== undefined) config.cleanClone.env = [...raw.clean_clone.env];
  if (raw.clean_clone?.provision !== undefined) config.cleanClone.provision = raw.clean_clone.provision;
  if (raw.clean_clone?.allow_external_symlinks !== undefined) config.cleanClone.allowExternalSymlinks = raw.clean_clone.allow_external_symlinks;
  return config;
}

/**
 * Refuses agent (and clean-clone suite) environment names the operator did not allow: the
 * repository may only ask for a subset of what the operator offers. The error names the offending key.
 */
export function assertAgentEnvAllowed(config: HarnessConfig, operatorAllow: readonly string[], source: string): void {
  const allowed = new Set(operatorAllow);
  config.agent.env.forEach((name, index) => {
    if (!allowed.has(name)) {
      throw new ConfigError(source, `$.agent.env[${index}]`, `asks for '${name}', which the operator does not allow agents to receive`);
    }
  });
  config.cleanClone.env?.forEach((name, index) => {
    if (!allowed.has(name)) {
      throw new ConfigError(source, `$.clean_clone.env[${index}]`, `asks for '${name}', which the operator does not allow (HARNESS_AGENT_ENV)`);
    }
  });
}

/** Flags of `harness run` that override the repository configuration. */
export interface ConfigOverrides {
  agentPreset?: AgentPreset;
  agentCommand?: string;
  testCommand?: string;
}

/** A copy of `config` with command-line overrides applied (a preset replaces a template and vice versa). */
export function withOverrides(config: HarnessConfig, overrides: ConfigOverrides): HarnessConfig {
  const next: HarnessConfig = structuredClone(config);
  if (overrides.agentPreset !== undefined) {
    next.agent.preset = overrides.agentPreset;
    delete next.agent.command;
  }
  if (overrides.agentCommand !== undefined) {
    next.agent.command = overrides.agentCommand;
    delete next.agent.preset;
  }
  if (overrides.testCommand !== undefined) next.test.command = overrides.testCommand;
  return next;
}

function minutes(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Math.round(value * MINUTE);
}
