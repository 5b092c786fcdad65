/**
 * A story's agent budget, failing closed: the repository's `budget` within the operator's
 * ceilings (the lower wins; a repository cannot raise them), and what the story's seats spent
 * so far, summed from their transcripts' usage over every wave, attempt and fix round. A seat
 * that spends the rest blocks the story as `budget-exhausted`.
 */
import type { Budget } from "./config.js";
import { ConfigError } from "./errors.js";

/** The operator's ceilings: HARNESS_MAX_TURNS_PER_SEAT, HARNESS_MAX_AGENT_MINUTES, HARNESS_MAX_TOKENS. */
export const BUDGET_CEILING_ENV = {
  maxTurnsPerSeat: "HARNESS_MAX_TURNS_PER_SEAT",
  maxAgentMinutes: "HARNESS_MAX_AGENT_MINUTES",
  maxTokens: "HARNESS_MAX_TOKENS",
} as const;

function positive(env: NodeJS.ProcessEnv, name: string, integer: boolean): number | undefined {
  const text = env[name]?.trim();
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)))
    throw new ConfigError("the operator's environment", name, `must be a positive ${integer ? "whole number" : "number"}, not '${text}'`);
  return value;
}

/** The operator's ceilings from `env`; a value that is not positive is an error naming the variable (never read as "no ceiling"). */
export function operatorBudget(env: NodeJS.ProcessEnv): Budget {
  const budget: Budget = {};
  const turns = positive(env, BUDGET_CEILING_ENV.maxTurnsPerSeat, true);
  const minutes = positive(env, BUDGET_CEILING_ENV.maxAgentMinutes, false);
  const tokens = positive(env, BUDGET_CEILING_ENV.maxTokens, true);
  if (turns !== undefined) budget.maxTurnsPerSeat = turns;
  if (minutes !== undefined) budget.maxAgentMs = Math.round(minutes * 60_000);
  if (tokens !== undefined) budget.maxTokens = tokens;
  return budget;
}

const lower = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : Math.min(a, b));

/** The budget a story runs under: each limit the lower of the repository's and the operator's. */
export function effectiveBudget(repository: Budget, operator: Budget): Budget {
  const budget: Budget = {};
  const turns = lower(repository.maxTurnsPerSeat, operator.maxTurnsPerSeat);
  const agentMs = lower(repository.maxAgentMs, operator.maxAgentMs);
  const tokens = lower(repository.maxTokens, operator.maxTokens);
  if (turns !== undefined) budget.maxTurnsPerSeat = turns;
  if (agentMs !== undefined) budget.maxAgentMs = agentMs;
  if (tokens !== undefined) budget.maxTokens = tokens;
  return budget;
}

/** What one launch of a seat spent. */
export interface LaunchSpending {
  turns: number;
  tokens: number;
  agentMs: number;
}

/** What earlier runs of the story spent, and how many runs that was (0 for its first). */
export interface EarlierSpending {
  runs: number;
  launches: number;
  tokens: number;
  agentMs: number;
}

const NOTHING_EARLIER: EarlierSpending = { runs: 0, launches: 0, tokens: 0, agentMs: 0 };

/**
 * The story's budget and what its seats have spent of it, this run's launches added to what its
 * earlier runs spent (a retry or a revision round does not start the count again); shared by
 * every task of the run. `record` is told the story's totals after each launch (to keep them).
 */
export class BudgetMeter {
  tokens: number;
  agentMs: number;
  launches: number;
  /** Runs of the story counted, this one included. */
  readonly runs: number;

  constructor(
    readonly budget: Budget,
    earlier: EarlierSpending = NOTHING_EARLIER,
    private readonly record: (totals: EarlierSpending) => void = () => undefined,
  ) {
    this.tokens = earlier.tokens;
    this.agentMs = earlier.agentMs;
    this.launches = earlier.launches;
    this.runs = earlier.runs + 1;
  }

  /** The story's totals so far, every run counted. */
  totals(): EarlierSpending {
    return { runs: this.runs, launches: this.launches, tokens: this.tokens, agentMs: this.agentMs };
  }

  /** The longest a seat may run: its own timeout, or less when fewer agent minutes are left. */
  seatTimeout(timeoutMs: number): number {
    if (this.budget.maxAgentMs === undefined) return timeoutMs;
    return Math.max(1, Math.min(timeoutMs, this.budget.maxAgentMs - this.agentMs));
  }

  /**
   * Counts a launch; returns why the budget is spent (after it), or undefined while some is left.
   * A launch that failed at the turn limit stopped there (Claude Code's `--max-turns`).
   */
  spend(launch: LaunchSpending, failed: boolean): string | undefined {
    this.tokens += launch.tokens;
    this.agentMs += launch.agentMs;
    this.launches += 1;
    this.record(this.totals());
    const { maxTurnsPerSeat } = this.budget;
    if (maxTurnsPerSeat !== undefined && (launch.turns > maxTurnsPerSeat || (failed && launch.turns >= maxTurnsPerSeat)))
      return `the seat took ${launch.turns} turns, max_turns_per_seat is ${maxTurnsPerSeat}`;
    return this.exhausted();
  }

  /** Why no further seat may start, or undefined. */
  exhausted(): string | undefined {
    const { maxAgentMs, maxTokens } = this.budget;
    // Said with the runs it took, so a spent budget on a retried story reads as the whole story's.
    const across = this.runs > 1 ? ` across its ${this.runs} runs` : "";
    if (maxTokens !== undefined && this.tokens >= maxTokens) return `the story's agents spent ${this.tokens} tokens${across} of max_tokens ${maxTokens}`;
    if (maxAgentMs !== undefined && this.agentMs >= maxAgentMs)
      return `the story's agents ran ${(this.agentMs / 60_000).toFixed(1)} minutes${across} of max_agent_minutes ${(maxAgentMs / 60_000).toFixed(1)}`;
    return undefined;
  }
}

/** What a seat's launch spent, from its result (a launch without a transcript counts its wall time only). */
export function spendingOf(result: { durationMs: number; usage?: { turns: number; inputTokens: number; outputTokens: number } }): LaunchSpending {
  return {
    turns: result.usage?.turns ?? 0,
    tokens: (result.usage?.inputTokens ?? 0) + (result.usage?.outputTokens ?? 0),
    agentMs: result.durationMs,
  };
}
