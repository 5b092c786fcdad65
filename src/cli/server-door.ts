/**
 * The App's server at the level of connections, below any request handler. Every connection
 * holds a file descriptor, and the stories need descriptors too (a git call takes three pipes):
 * idle connections without a cap once exhausted the process (EMFILE) and failed the running
 * story. So the server admits at most `maxConnections` at once, a number chosen from the
 * process's `RLIMIT_NOFILE` with headroom for the stories; one more is answered `503` with
 * `Retry-After` at once and closed, and past a small allowance of such answers in progress the
 * kernel's connection is closed without one. Slow headers and slow requests are cut by node's
 * own timeouts, shorter than its defaults.
 */
import { readFileSync } from "node:fs";
import type { Server as HttpServer } from "node:http";
import type { Server as NetServer, Socket } from "node:net";
import { positiveInteger } from "./usage.js";

/** Where Linux says what this process may open; node has already raised the soft limit to the hard one. */
export const LIMITS_FILE = "/proc/self/limits";
/** Connections admitted when the descriptor limit cannot be read (not Linux). */
export const UNKNOWN_LIMIT_CONNECTIONS = 1024;
/** The most connections chosen from the limit: far more than GitHub opens, few enough to keep memory small. */
export const MAX_CHOSEN_CONNECTIONS = 8192;
/** The fewest connections chosen, however low the limit. */
export const MIN_CHOSEN_CONNECTIONS = 32;
/** Descriptors always left to the stories, whatever the limit (at least half of it is left). */
export const STORY_HEADROOM = 512;
/** The `Retry-After` of a connection over the cap. */
export const CONNECTION_RETRY_AFTER_SECONDS = 5;
/** How long a refused connection may stay to read its 503 before it is cut. */
export const REFUSED_LINGER_MS = 1_000;
/** Headers must have arrived this long after the connection (node's default is 60 s). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A whole request (headers and body) must have arrived this long after the connection (node's default is 300 s). */
export const REQUEST_TIMEOUT_MS = 30_000;

export interface ServerDoorSettings {
  /** Connections open at once; one more is answered 503. */
  maxConnections: number;
  /** Where the number came from, for the start-up line. */
  source: "HARNESS_MAX_CONNECTIONS" | "RLIMIT_NOFILE" | "default";
  /** The soft descriptor limit read, when it was. */
  nofile?: number;
}

/** The soft `Max open files` of `/proc/self/limits`; undefined where it cannot be read or is unlimited. */
export function readNofileLimit(file: string = LIMITS_FILE): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const line = text.split("\n").find((row) => row.startsWith("Max open files"));
  const soft = Number(line?.slice("Max open files".length).trim().split(/\s+/)[0]);
  return Number.isSafeInteger(soft) && soft > 0 ? soft : undefined;
}

/**
 * The connection cap for a descriptor limit: what is left once the stories have their
 * headroom (half the limit, at least {@link STORY_HEADROOM}), less a fifth for the 503s in
 * progress, between {@link MIN_CHOSEN_CONNECTIONS} and {@link MAX_CHOSEN_CONNECTIONS}.
 */
export function connectionCapFor(nofile: number | undefined): number {
  if (nofile === undefined) return UNKNOWN_LIMIT_CONNECTIONS;
  const budget = nofile - Math.max(STORY_HEADROOM, Math.floor(nofile / 2));
  return Math.min(MAX_CHOSEN_CONNECTIONS, Math.max(MIN_CHOSEN_CONNECTIONS, Math.floor((budget * 4) / 5)));
}

/** Reads `HARNESS_MAX_CONNECTIONS` (a positive integer), else chooses from the descriptor limit. */
export function readServerDoor(
  env: Readonly<Record<string, string | undefined>>,
  limits: { nofile: number | undefined } = { nofile: readNofileLimit() },
): ServerDoorSettings {
  const { nofile } = limits;
  const given = positiveInteger("HARNESS_MAX_CONNECTIONS", env.HARNESS_MAX_CONNECTIONS?.trim() || undefined);
  const limit = nofile === undefined ? {} : { nofile };
  if (given !== undefined) return { maxConnections: given, source: "HARNESS_MAX_CONNECTIONS", ...limit };
  return { maxConnections: connectionCapFor(nofile), source: nofile === undefined ? "default" : "RLIMIT_NOFILE", ...limit };
}

/** The answer of a connection over the cap, written before its request is read. */
function refusal(retryAfterSeconds: number): string {
  const body = "too many connections: try again later\n";
  return `HTTP/1.1 503 Service Unavailable\r\nRetry-After: ${retryAfterSeconds}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
}

export interface ConnectionCapOptions {
  maxConnections: number;
  retryAfterSeconds?: number;
  lingerMs?: number;
  /** Called for each connection refused (with or without its 503). */
  onRefused?: () => void;
}

/**
 * Caps the connections `server` holds. The server's own connection listeners (node's HTTP
 * parser among them) are taken off and called only for an admitted connection, so a refused one
 * is never parsed: whatever it sends is discarded, and it gets the 503 and is closed. Refusals
 * in progress are themselves capped (a fifth of the cap, at least 8): past that a connection is
 * closed at once, so refusing can never cost the descriptors the cap protects.
 */
export function capConnections(server: NetServer, options: ConnectionCapOptions): void {
  const admit = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  const answer = refusal(options.retryAfterSeconds ?? CONNECTION_RETRY_AFTER_SECONDS);
  const lingerMs = options.lingerMs ?? REFUSED_LINGER_MS;
  const maxRefusing = Math.max(8, Math.ceil(options.maxConnections / 5));
  let open = 0;
  let refusing = 0;
  server.on("connection", (socket: Socket) => {
    if (open < options.maxConnections) {
      open += 1;
      socket.once("close", () => (open -= 1));
      for (const listener of admit) listener.call(server, socket);
      return;
    }
    options.onRefused?.();
    socket.on("error", () => undefined); // a client that reset the connection: nothing to answer
    if (refusing >= maxRefusing) {
      socket.destroy();
      return;
    }
    refusing += 1;
    const cut = setTimeout(() => socket.destroy(), lingerMs);
    socket.once("close", () => {
      refusing -= 1;
      clearTimeout(cut);
    });
    socket.resume(); // what it sends is read and dropped, so the client can finish and read the 503
    socket.end(answer);
  });
}

/** Node's timeouts for slow headers and slow requests, shorter than its defaults. */
export function shortenTimeouts(server: HttpServer): void {
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
}

/** The start-up line that says the cap and where it came from. */
export function serverDoorNotice(settings: ServerDoorSettings): string {
  const why =
    settings.source === "HARNESS_MAX_CONNECTIONS"
      ? "HARNESS_MAX_CONNECTIONS"
      : settings.source === "RLIMIT_NOFILE"
        ? `chosen from the descriptor limit ${settings.nofile ?? "?"}; HARNESS_MAX_CONNECTIONS sets it`
        : "the descriptor limit could not be read; HARNESS_MAX_CONNECTIONS sets it";
  return `harness serve: at most ${settings.maxConnections} connections at once (${why})\n`;
}
