/**
 * BENCH_PERF=1: what a server's process asked of the kernel during a burst, counted by
 * `perf stat` attached to it (all its threads) for the burst's length: system calls by kind
 * and context switches. Counts, not times: a delivery's thread-pool round trips and wake-ups
 * show here whatever the machine's load.
 */
import { exec, succeeded } from "../../src/exec/index.js";

/** The events counted, by the name they are reported under. */
export const PERF_EVENTS = {
  syscalls: "raw_syscalls:sys_enter",
  contextSwitches: "context-switches",
  write: "syscalls:sys_enter_write",
  writev: "syscalls:sys_enter_writev",
  fdatasync: "syscalls:sys_enter_fdatasync",
  futex: "syscalls:sys_enter_futex",
  epollWait: "syscalls:sys_enter_epoll_wait",
} as const;

export type PerfCounts = Record<keyof typeof PERF_EVENTS, number>;

/** Counts `pid`'s events for `seconds`; rejects when perf cannot (not installed, not permitted). */
export async function perfCounts(pid: number, seconds: number): Promise<PerfCounts> {
  const events = Object.values(PERF_EVENTS).join(",");
  const result = await exec(["perf", "stat", "-x", ",", "-e", events, "-p", String(pid), "--", "sleep", seconds.toFixed(2)], { cwd: process.cwd() });
  if (!succeeded(result)) throw new Error(`perf stat failed (exit ${result.exitCode}): ${result.tail}`);
  return parsePerfStat(result.tail);
}

/** `perf stat -x ,` output (`<count>,<unit>,<event>,…` a line) as counts by name; an event not counted reads NaN. */
export function parsePerfStat(text: string): PerfCounts {
  const byEvent = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [count, , event] = line.split(",");
    if (event) byEvent.set(event, Number(count));
  }
  const counts = {} as PerfCounts;
  for (const [name, event] of Object.entries(PERF_EVENTS) as Array<[keyof PerfCounts, string]>) counts[name] = byEvent.get(event) ?? Number.NaN;
  return counts;
}
