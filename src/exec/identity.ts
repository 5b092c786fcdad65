/**
 * Telling a process apart from a later one that got the same pid. A pid alone is reused (a
 * restarted container's App is often pid 1 again), so a record of a process also keeps its
 * start time, read from `/proc/<pid>/stat` (field 22, clock ticks since boot) together with
 * the boot id: the pair names one life of one process on one boot.
 */
import { readProcFile } from "./proc-file.js";

/** One life of a process: its pid and when it started (`<boot id>:<ticks>`, or `unknown` without /proc). */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

/** What a start time is where /proc cannot be read: only the pid is checked then. */
export const UNKNOWN_START = "unknown";

/** A file under /proc, or undefined when it cannot be read (the process is gone, or there is no /proc). */
function readProc(path: string): string | undefined {
  return readProcFile(`/proc/${path}`);
}

/** What /proc tells of a running process: its process group and start time (clock ticks since boot). */
export interface LiveStat {
  pgid: number;
  startTicks: string;
}

/**
 * `/proc/<pid>/stat` of a process that still runs; undefined when it cannot be read (no such
 * process, a `pid` that is not one, no /proc) or the process is dead (a zombie).
 */
export function liveStat(pid: number): LiveStat | undefined {
  const stat = readProc(`${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name is in parentheses and may itself contain spaces or parentheses.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state), fields[2] field 5 (process group); field 22 (starttime) is fields[19].
  const state = fields[0];
  const gone =
    state === "Z" ||
    // Stryker disable next-line StringLiteral,ConditionalExpression: state X (dead) is never seen in /proc: a process in it is already gone.
    state === "X";
  if (gone) return undefined;
  const startTicks = fields[19];
  // Stryker disable next-line ConditionalExpression: a stat line always has field 22; the check only narrows the type.
  return startTicks === undefined ? undefined : { pgid: Number(fields[2]), startTicks };
}

let bootId: string | undefined;
function currentBootId(): string {
  // Stryker disable next-line StringLiteral,OptionalChaining: the fallback is reached only without /proc (not Linux, which the sandbox needs).
  bootId ??= readProc("sys/kernel/random/boot_id")?.trim() ?? "";
  return bootId;
}

/** The identity of a running process, or undefined when it is not running. */
export function identityOf(pid: number): ProcessIdentity | undefined {
  // Where /proc exists, a number that is not a pid (0, -1, 1.5, NaN) names no file there.
  const stat = liveStat(pid);
  // Stryker disable next-line all: reached only without /proc (not Linux, which the sandbox needs); no test machine has that.
  if (!stat) return procAvailable() || !Number.isInteger(pid) || pid < 1 || !signalReaches(pid) ? undefined : { pid, startTime: UNKNOWN_START };
  return { pid, startTime: `${currentBootId()}:${stat.startTicks}` };
}

/** The identity of this process. */
export function selfIdentity(): ProcessIdentity {
  // Stryker disable next-line ObjectLiteral: the fallback is reached only without /proc (not Linux); the running process always has an identity there.
  return identityOf(process.pid) ?? { pid: process.pid, startTime: UNKNOWN_START };
}

/**
 * True while the process named by `identity` runs: the pid exists, is not a zombie and
 * started at the recorded time. A pid below 1 never names a process (`kill(-1, 0)` would
 * "succeed" by signalling every process we may signal).
 */
export function isRunning(identity: ProcessIdentity): boolean {
  const now = identityOf(identity.pid);
  if (!now) return false;
  if (identity.startTime === UNKNOWN_START) return true;
  // Stryker disable next-line ConditionalExpression,BooleanLiteral: the running process's start time is unknown only without /proc (not Linux, which the sandbox needs).
  if (now.startTime === UNKNOWN_START) return true;
  return now.startTime === identity.startTime;
}

// Stryker disable all: reached only without /proc (not Linux, which the sandbox needs); no test machine has that.
/** True where /proc shows processes (Linux); elsewhere identities carry only the pid. */
function procAvailable(): boolean {
  return readProc(`${process.pid}/stat`) !== undefined;
}

function signalReaches(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
// Stryker restore all
