/**
 * What to do after GitHub refused a write: when to try again, or that it never will succeed.
 * Rate limits say when (`retry-after`, `x-ratelimit-reset`); server errors and lost
 * connections back off exponentially; a target that is gone (404, 410) or a request GitHub
 * rejects as invalid (422) is undeliverable.
 */

export interface RetryPolicy {
  /** First backoff after a server error; doubled per attempt. */
  baseDelayMs: number;
  /** Longest backoff. */
  maxDelayMs: number;
  /** Attempts at one state before it is given up as undeliverable. */
  maxAttempts: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseDelayMs: 1000, maxDelayMs: 10 * 60_000, maxAttempts: 40 };

/** The longest wait honoured from a `retry-after` or reset header. */
const MAX_HINT_MS = 60 * 60_000;

export type RetryVerdict = { retry: true; afterMs: number; why: string } | { retry: false; why: string };

interface RequestErrorLike {
  status?: unknown;
  message?: unknown;
  response?: { headers?: Record<string, unknown>; data?: unknown };
  errors?: Array<{ type?: unknown; message?: unknown }>;
}

/** Decides whether and when to retry after `error` on the `attempt`-th failure (1-based). */
export function retryVerdict(error: unknown, attempt: number, policy: RetryPolicy, now: number = Date.now()): RetryVerdict {
  const e = (typeof error === "object" && error !== null ? error : {}) as RequestErrorLike;
  const status = typeof e.status === "number" ? e.status : undefined;
  const message = typeof e.message === "string" ? e.message : String(error);
  const why = `${status ?? "no status"}: ${message}`.slice(0, 500);
  // A refusal its deliverer knows to be final (a push GitHub declined): its words are the reason.
  if ((e as { retriable?: unknown }).retriable === false) return { retry: false, why: message.slice(0, 4000) };
  if (attempt >= policy.maxAttempts) return { retry: false, why: `gave up after ${attempt} attempts; last ${why}` };
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  // GraphQL answers 200 with errors; NOT_FOUND means the pull request is gone.
  if (Array.isArray(e.errors) && e.errors.some((item) => item.type === "NOT_FOUND")) return { retry: false, why };
  const headers = e.response?.headers ?? {};
  const retryAfter = Number(headers["retry-after"]);
  if ((status === 403 || status === 429) && Number.isFinite(retryAfter) && retryAfter >= 0)
    return { retry: true, afterMs: Math.min(MAX_HINT_MS, retryAfter * 1000), why };
  if ((status === 403 || status === 429) && String(headers["x-ratelimit-remaining"]) === "0") {
    const reset = Number(headers["x-ratelimit-reset"]) * 1000;
    return { retry: true, afterMs: Number.isFinite(reset) ? Math.min(MAX_HINT_MS, Math.max(0, reset - now)) : backoff, why };
  }
  if ((status === 403 || status === 429) && /secondary rate limit|abuse/i.test(message)) return { retry: true, afterMs: Math.max(60_000, backoff), why };
  if (status === 404 || status === 410 || status === 422) return { retry: false, why };
  if (status === 403 || status === 400) return { retry: false, why };
  // 5xx, 401 (a token that expired in between), 429 without hints, lost connections.
  return { retry: true, afterMs: backoff, why };
}
