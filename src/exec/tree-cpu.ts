/**
 * The CPU time a process and everything it started have used so far, read from /proc: what
 * tells an agent CLI's CPU-bound start from its wait on its model (agent-boots.ts). Linux only;
 * elsewhere, or once the process is gone, there is no answer.
 */
import { readdirSync } from "node:fs";
import { readProcFile } from "./proc-file.js";

/** /proc's clock ticks per second (USER_HZ, 100 on every Linux). */
const TICK_MS = 10;
/** At most this many processes are read: an agent that forks without end is not walked whole. */
const MAX_PROCESSES = 256;

/**
 * The CPU time in one `/proc/<pid>/stat` line, in ms: the process's own (utime, stime) and that of
 * its children it has waited for (cutime, cstime), so a child that ends is not lost from a tree's
 * sum. Undefined when the line is not a stat line.
 */
export function cpuMsOfStat(line: string): number | undefined {
  // The command name (field 2) is in parentheses and may hold spaces and parentheses itself.
  const close = line.lastIndexOf(")");
  if (close < 0) return undefined;
  // Fields 14–17 (utime, stime, cutime, cstime) are the 12th to 15th after the name.
  const ticks = line
    .slice(close + 2)
    .split(" ")
    .slice(11, 15);
  if (ticks.length < 4 || ticks.some((field) => !/^\d+$/.test(field))) return undefined;
  return ticks.reduce((sum, field) => sum + Number(field), 0) * TICK_MS;
}

function childrenOf(pid: number): number[] {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const thread of threads) {
    for (const child of (readProcFile(`/proc/${pid}/task/${thread}/children`) ?? "").split(" ")) if (child !== "") children.push(Number(child));
  }
  return children;
}

/**
 * The CPU time, in ms, that `root` and its descendants have used: the living ones' own and what
 * they waited for of their ended children. Undefined when `root` is gone.
 */
export function treeCpuMs(root: number): number | undefined {
  const own = readProcFile(`/proc/${root}/stat`);
  const rootMs = own === undefined ? undefined : cpuMsOfStat(own);
  if (rootMs === undefined) return undefined;
  let total = rootMs;
  const seen = new Set([root]);
  const queue = childrenOf(root);
  while (queue.length > 0 && seen.size < MAX_PROCESSES) {
    const pid = queue.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const stat = readProcFile(`/proc/${pid}/stat`);
    total += (stat === undefined ? undefined : cpuMsOfStat(stat)) ?? 0;
    queue.push(...childrenOf(pid));
  }
  return total;
}

/**
 * When an agent CLI counts as idle: less than 20 ms of CPU (at most one 10 ms tick of /proc's
 * clock, a tenth of a core) in a 100 ms window. Its start and its handling of each answer are
 * CPU-bound; waiting on its model, or a script that sleeps, is not.
 */
export const AGENT_IDLE = { sampleMs: 100, idleCpuMs: 20 } as const;

/** A watch on a process tree's CPU; `cancel()` ends it without calling back. */
export interface IdleWatch {
  cancel(): void;
}

export interface IdleOptions {
  /** How often the tree's CPU is read. */
  sampleMs: number;
  /** Less CPU than this, in ms, in one sample's window is an idle tree. */
  idleCpuMs: number;
  /** Reads the tree's CPU (tests pass their own). */
  cpuMs?: (pid: number) => number | undefined;
}

/**
 * Calls `onIdle` once, when the tree of `pid` used less than `idleCpuMs` of CPU in one window
 * of `sampleMs` (an agent CLI waiting on its model), or once it is gone. Read every `sampleMs`
 * until then; nothing is read after.
 */
export function watchIdle(pid: number, onIdle: () => void, options: IdleOptions): IdleWatch {
  const cpuMs = options.cpuMs ?? treeCpuMs;
  let last = cpuMs(pid);
  if (last === undefined) {
    onIdle();
    return { cancel: () => undefined };
  }
  const sampler = setInterval(() => {
    const now = cpuMs(pid);
    if (now === undefined || now - (last as number) < options.idleCpuMs) {
      clearInterval(sampler);
      onIdle();
      return;
    }
    last = now;
  }, options.sampleMs);
  sampler.unref();
  return { cancel: () => clearInterval(sampler) };
}
