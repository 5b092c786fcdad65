/**
 * Ending a process group for good. A child runs as the leader of its own group, so the group id
 * is its pid; signalling `-pgid` reaches every process it started that did not leave the group.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** How often a group is looked at while it is being ended. */
const POLL_MS = 20;
/** How long SIGKILLed processes get to disappear before the harness stops waiting for them. */
const KILL_SETTLE_MS = 1000;

/** Sends `signal` to every process of group `pgid`; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    // EPERM means members exist that we may not signal; they still count as alive.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * True while group `pgid` has a member that is not a zombie. `kill(-pgid, 0)` alone is not
 * enough: when PID 1 does not reap orphans (common in containers), a dead grandchild stays a
 * zombie forever and still counts as a member, so on Linux the group is read from /proc.
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  const live = liveMembersFromProc(pgid);
  // Stryker disable next-line BooleanLiteral: the fallback is reached only without /proc (not Linux, which the sandbox needs).
  return live ?? true;
}

/** Whether /proc lists a running member of `pgid`; undefined where /proc is not available. */
function liveMembersFromProc(pgid: number): boolean | undefined {
  // Stryker disable next-line ConditionalExpression,BlockStatement,BooleanLiteral: reached only without /proc (not Linux, which the sandbox needs).
  if (!existsSync("/proc")) return undefined;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "latin1");
    } catch {
      continue; // The process ended while we looked.
    }
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const state = fields[0];
    if (Number(fields[2]) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends group `pgid`: SIGTERM, then SIGKILL to whatever is still running after `graceMs`.
 * Resolves once no live member is left (or, where that cannot be observed, shortly after the
 * SIGKILL), so a caller that awaits it knows the whole tree is gone.
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  const termDeadline = performance.now() + graceMs;
  while (groupAlive(pgid)) {
    if (performance.now() >= termDeadline) {
      signalGroup(pgid, "SIGKILL");
      const killDeadline = performance.now() + KILL_SETTLE_MS;
      while (groupAlive(pgid) && performance.now() < killDeadline) await delay(POLL_MS);
      return;
    }
    await delay(POLL_MS);
  }
}
