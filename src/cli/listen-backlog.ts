/**
 * The listen backlog of the App's server (`HARNESS_LISTEN_BACKLOG`). Probot's server listens
 * with node's default (511) and takes no option, so `harness serve` sets it at the one place
 * node lets it be set from outside: the `net.server.listen` tracing channel, whose start
 * message carries the options object `listen` reads its backlog from. Only a listen started
 * while {@link listeningWithBacklog} runs, and only one that names no backlog of its own, gets it.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { readFileSync } from "node:fs";
import { Server } from "node:net";
import { positiveInteger } from "./usage.js";

/** The backlog asked for when `HARNESS_LISTEN_BACKLOG` is unset. */
export const DEFAULT_LISTEN_BACKLOG = 4096;
/** Where Linux says how long an accept queue may be; a longer backlog is cut to it. */
export const SOMAXCONN_FILE = "/proc/sys/net/core/somaxconn";
/** node's tracing channel published at the start of every `server.listen`. */
export const LISTEN_CHANNEL = "tracing:net.server.listen:asyncStart";

export interface ListenBacklog {
  /** The backlog the server listens with. */
  backlog: number;
  /** What the setting (or the default) asked for. */
  requested: number;
  /** The kernel's `net.core.somaxconn`, when it is lower than what was asked. */
  cappedBy?: number;
}

/** The kernel's `net.core.somaxconn`; undefined where it cannot be read (not Linux). */
export function kernelSomaxconn(file: string = SOMAXCONN_FILE): number | undefined {
  let text: string | undefined;
  try {
    // Stryker disable next-line StringLiteral: without the encoding a Buffer comes back, which Number() reads through the same text
    text = readFileSync(file, "utf8");
  } catch {
    // Not there (not Linux): undefined, which Number() reads as NaN.
  }
  // Number() ignores the surrounding whitespace (the file's newline).
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** Reads `HARNESS_LISTEN_BACKLOG` (a positive integer; {@link DEFAULT_LISTEN_BACKLOG} unset), cut to `somaxconn`. */
export function readListenBacklog(env: Readonly<Record<string, string | undefined>>, somaxconn: number | undefined): ListenBacklog {
  const requested = positiveInteger("HARNESS_LISTEN_BACKLOG", env.HARNESS_LISTEN_BACKLOG?.trim() || undefined) ?? DEFAULT_LISTEN_BACKLOG;
  const cap = somaxconn ?? Number.POSITIVE_INFINITY;
  if (cap < requested) return { backlog: cap, requested, cappedBy: cap };
  return { backlog: requested, requested };
}

/** The start-up line that says the kernel cut the backlog; undefined when it did not. */
export function backlogNotice(setting: ListenBacklog): string | undefined {
  if (setting.cappedBy === undefined) return undefined;
  return `harness serve: listen backlog ${setting.backlog}, not ${setting.requested}: the kernel's net.core.somaxconn is ${setting.cappedBy}\n`;
}

/**
 * Runs `start` (which makes a server listen) with `backlog` given to every listen it starts
 * that names none; resolves with its value and how many listens took the backlog. `onServer`
 * sees each server as its listen starts, before it accepts a connection.
 */
export async function listeningWithBacklog<T>(
  backlog: number,
  start: () => Promise<T>,
  onServer?: (server: Server) => void,
): Promise<{ value: T; applied: number }> {
  let applied = 0;
  const onListen = (message: unknown): void => {
    const server = (message as { server?: unknown } | undefined)?.server;
    if (onServer && server instanceof Server) onServer(server);
    const options = (message as { options?: { backlog?: unknown } } | undefined)?.options;
    if (typeof options !== "object" || options === null || options.backlog !== undefined) return;
    options.backlog = backlog;
    applied += 1;
  };
  subscribe(LISTEN_CHANNEL, onListen);
  try {
    return { value: await start(), applied };
  } finally {
    unsubscribe(LISTEN_CHANNEL, onListen);
  }
}
