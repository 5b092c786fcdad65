/** Reading `HARNESS_QUEUE`: which Redis the BullMQ adapter talks to. */
import type { FailureClass } from "../../failure/index.js";

/** A `HARNESS_QUEUE` value that is not a Redis URL; the message names the variable and the rule. */
export class QueueUrlError extends Error {
  readonly failureClass = "usage" satisfies FailureClass;
  constructor(message: string) {
    super(message);
    this.name = "QueueUrlError";
  }
}

/** A parsed Redis location. The password is kept out of `display`, which is what logs print. */
export interface RedisTarget {
  url: string;
  display: string;
}

/** Parses `redis://[user:password@]host[:port][/db]` (or `rediss://` for TLS). */
export function parseRedisUrl(value: string, variable = "HARNESS_QUEUE"): RedisTarget {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new QueueUrlError(`${variable} must be a redis:// URL such as redis://localhost:6379/0, got '${redactUnparsed(value)}'`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new QueueUrlError(`${variable} must start with redis:// or rediss://, got '${url.protocol}'`);
  }
  if (url.hostname === "") throw new QueueUrlError(`${variable} names no host`);
  // Stryker disable next-line Regex: a URL's path starts with '/' whenever it is not empty, so the first '/' is the leading one
  const db = url.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d{1,2}$/.test(db)) throw new QueueUrlError(`${variable}: the database must be a number (redis://host:6379/0), got '/${db}'`);
  return { url: value, display: redactUrl(value) };
}

/**
 * The URL without its password. As in a URL parser, the credentials end at the last '@' before
 * the host (a user name or password may hold an unencoded '@'), the first ':' in them ends the user
 * name, and the first '/' ends the authority.
 */
export function redactUrl(value: string): string {
  return value.replace(/\/\/([^/:]*):[^/]*@/, "//$1:***@");
}

/**
 * A value no URL parser reads has no known end to its credentials (a password may hold a '/'),
 * so everything between its scheme and its last '@' is hidden.
 */
function redactUnparsed(value: string): string {
  const at = value.lastIndexOf("@");
  if (at < 0) return value;
  const scheme = /^[^@]*?\/\//.exec(value)?.[0] ?? "";
  return `${scheme}***${value.slice(at)}`;
}
