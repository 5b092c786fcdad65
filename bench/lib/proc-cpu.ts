/**
 * CPU time of processes from `/proc/<pid>/stat` (Linux): a process's own and that of the
 * children it has waited for (git, agents, suites: `cutime` + `cstime` include their own
 * waited-for descendants). For the scale-out bench: CPU seconds per story, by process, tell
 * which process's work does not scale on a machine with two cores.
 */
import { readFileSync } from "node:fs";

/** Clock ticks per second of `/proc` (USER_HZ, 100 on Linux). */
const TICK_MS = 10;

export interface ProcessCpu {
  /** ms of the process itself (user + system). */
  self: number;
  /** ms of its waited-for children and their descendants. */
  children: number;
}

/** The CPU a live process used so far; zeros when it cannot be read (not Linux, gone). */
export function processCpu(pid: number | "self"): ProcessCpu {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const at = (field: number): number => Number(fields[field - 3] ?? 0);
    return { self: (at(14) + at(15)) * TICK_MS, children: (at(16) + at(17)) * TICK_MS };
  } catch {
    return { self: 0, children: 0 };
  }
}

/** `after - before`, field by field. */
export function cpuSince(before: ProcessCpu, after: ProcessCpu): ProcessCpu {
  return { self: after.self - before.self, children: after.children - before.children };
}
