/**
 * Production logging without a blocking write per line. Probot's own logger writes every line
 * to stdout with a synchronous write (and pretty-prints unless LOG_FORMAT=json); with two lines
 * per webhook (the request and its outcome) that write sits on the webhook's path. With
 * LOG_FORMAT=json — what a deployment sets — the App logs the same JSON lines as Probot would,
 * through an asynchronous destination: lines are handed to the kernel off the event loop, in
 * order, and flushed when the App stops. Lines are gathered into writes of at least
 * {@link LOG_BATCH_BYTES}, or whatever {@link LOG_FLUSH_MS} brought: at a few hundred webhooks a
 * second, a write per line cost each line a thread-pool round trip (two wake-ups) and a wake-up
 * of whoever reads stdout (docs/benchmarks.md, `## webhook-latency`).
 */
import { pino, type Logger } from "pino";

/** Bytes of log lines gathered before they are written (about ten webhooks' lines). */
export const LOG_BATCH_BYTES = 4096;
/** The longest a log line waits for its write. */
export const LOG_FLUSH_MS = 100;

/** Probot's log levels (LOG_LEVEL). */
const LEVELS = new Set(["trace", "debug", "info", "warn", "error", "fatal"]);

/**
 * The App's logger for `env`, or undefined to keep Probot's own: when LOG_FORMAT is not `json`
 * (pretty output for a person), or a setting only Probot's logger knows is used (SENTRY_DSN,
 * LOG_LEVEL_IN_STRING, LOG_MESSAGE_KEY).
 */
export function asyncJsonLog(env: NodeJS.ProcessEnv): Logger | undefined {
  if (env.LOG_FORMAT !== "json" || env.SENTRY_DSN || env.LOG_LEVEL_IN_STRING === "true" || env.LOG_MESSAGE_KEY) return undefined;
  const level = env.LOG_LEVEL && LEVELS.has(env.LOG_LEVEL) ? env.LOG_LEVEL : "info";
  return pino(
    { level, name: "probot", messageKey: "msg" },
    pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}
