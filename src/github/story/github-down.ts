/**
 * A story's first GitHub calls (its tokens, the admission check, the lookup of an earlier pull
 * request) decide nothing when GitHub is down: a 5xx, a refused or lost connection, or a rate
 * limit with `retry-after` says "later", not "no". Such a job is kept — its worker waits and
 * asks again with backoff, honouring GitHub's own hints — instead of being reported failed and
 * removed from the queue. An answer that is final (404, 422, a plain 403) is thrown at once, as
 * is any error that is not an HTTP answer at all (a bug must not be retried forever).
 */
import { setTimeout as sleepFor } from "node:timers/promises";
import { errorDetails, type GitHubLog } from "../index.js";
import { retryVerdict, type RetryPolicy } from "../../outbox/index.js";

/** Backoff while GitHub is down: 1 s doubling to 5 minutes, for as long as it takes. */
export const GITHUB_DOWN_POLICY: RetryPolicy = { baseDelayMs: 1000, maxDelayMs: 5 * 60_000, maxAttempts: Number.POSITIVE_INFINITY };

/** Waits `ms`, or rejects when `signal` aborts (the App is stopping; the job stays queued). */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export interface GitHubDownOptions {
  /** Tests pass one that records the wait and returns when they say; real time otherwise. */
  sleep?: Sleep;
  policy?: Partial<RetryPolicy>;
  log: GitHubLog;
  /** What the log lines name (the story). */
  what: object;
}

const realSleep: Sleep = (ms, signal) => sleepFor(ms, undefined, { signal });

/** How long to wait before asking again, or undefined when `error` is a final answer. */
export function githubDownDelay(error: unknown, attempt: number, policy: RetryPolicy = GITHUB_DOWN_POLICY, now: number = Date.now()): number | undefined {
  const status = typeof error === "object" && error !== null ? (error as { status?: unknown }).status : undefined;
  // Octokit answers every failure, a refused connection included (status 500), with a status.
  if (typeof status !== "number") return undefined;
  const verdict = retryVerdict(error, attempt, policy, now);
  return verdict.retry ? verdict.afterMs : undefined;
}

/**
 * Runs `work` until GitHub answers it: a transient failure is logged and `work` runs again
 * after the backoff; a final one, or an abort of `signal`, is thrown.
 */
export async function untilGitHubAnswers<T>(work: () => Promise<T>, signal: AbortSignal, options: GitHubDownOptions): Promise<T> {
  const policy = { ...GITHUB_DOWN_POLICY, ...options.policy };
  const sleep = options.sleep ?? realSleep;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      const delayMs = githubDownDelay(error, attempt, policy);
      if (delayMs === undefined || signal.aborted) throw error;
      options.log.warn(
        { ...options.what, attempt, retryInMs: delayMs, err: errorDetails(error) },
        "GitHub did not answer the story's first calls; the job stays queued and asks again",
      );
      await sleep(delayMs, signal);
    }
  }
}
