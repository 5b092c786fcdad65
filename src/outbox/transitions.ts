/** How an entry changes after an attempt: pure, so the outbox only records and logs. */
import type { RetryVerdict } from "./retry.js";
import type { OutboxEntry } from "./types.js";

/**
 * After GitHub accepted `sent` (the state that was on its way): delivered, unless a newer state
 * of the slot arrived meanwhile, which stays pending with what GitHub answered (the id it needs).
 */
export function afterDelivery(latest: OutboxEntry, sent: OutboxEntry, result: OutboxEntry["result"], now: number): OutboxEntry {
  const merged = { ...latest.result, ...result };
  const withResult = Object.keys(merged).length > 0 ? { result: merged } : {};
  const updatedAt = new Date(now).toISOString();
  if (latest.write !== sent.write) return { ...latest, ...withResult, state: "pending", updatedAt };
  const { nextAt: _nextAt, lastError: _lastError, ...rest } = latest;
  return { ...rest, ...withResult, state: "delivered", attempts: 0, updatedAt };
}

/** After a refused attempt: when to try again, or undeliverable. */
export function afterFailure(latest: OutboxEntry, verdict: RetryVerdict, attempts: number, now: number): OutboxEntry {
  const updatedAt = new Date(now).toISOString();
  if (verdict.retry) return { ...latest, attempts, lastError: verdict.why, nextAt: new Date(now + verdict.afterMs).toISOString(), updatedAt };
  const { nextAt: _nextAt, ...rest } = latest;
  return { ...rest, attempts, lastError: verdict.why, state: "undeliverable", updatedAt };
}
