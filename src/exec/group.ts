/**
 * Ending a process group for good. A child runs as the leader of its own group, so the group id
 * is its pid; signalling `-pgid` reaches every process it started that did not leave the group.
 */
import { existsSync, readdirSync } from "node:fs";
import { liveStat } from "./identity.js";

/** How often a group is looked at while it is being ended. */
const POLL_MS = 20;
/** How long SIGKILLed processes get to disappear before the harness stops waiting for them. */
const KILL_SETTLE_MS = 1000;

/** Sends `signal` to every process of group `pgid`; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } /* Stryker disable next-line BlockStatement: an empty catch answers undefined, which callers read as false, what it answers as root. */ catch (error) {
    // EPERM means members exist that we may not signal; they still count as alive.
    // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: EPERM needs a member this process may not signal; the tests run as root, who may signal every process.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * True while group `pgid` has a member that is not a zombie. `kill(-pgid, 0)` alone is not
 * enough: when PID 1 does not reap orphans (common in containers), a dead grandchild stays a
 * zombie forever and still counts as a member, so on Linux the group is read from /proc.
 */
export function groupAlive(pgid: number): boolean {
  // Stryker disable next-line LogicalOperator: /proc always answers on Linux (which the sandbox needs); kill(-pgid, 0) is the fallback without it.
  return liveMembersFromProc(pgid) ?? signalGroup(pgid, 0);
}

/** Whether /proc lists a running member of `pgid`; undefined where /proc is not available. */
function liveMembersFromProc(pgid: number): boolean | undefined {
  // Stryker disable next-line ConditionalExpression,BlockStatement,BooleanLiteral: reached only without /proc (not Linux, which the sandbox needs).
  if (!existsSync("/proc")) return undefined;
  // Names that are not a pid (self, sys, ...) give NaN, which names no process.
  return readdirSync("/proc").some((name) => liveStat(Number(name))?.pgid === pgid);
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends group `pgid`: SIGTERM, then SIGKILL to whatever is still running after `graceMs`.
 * Resolves once no live member is left (or, where that cannot be observed, shortly after the
 * SIGKILL), so a caller that awaits it knows the whole tree is gone.
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  // Stryker disable next-line StringLiteral: process.kill sends SIGTERM for an empty signal name too.
  if (!signalGroup(pgid, "SIGTERM")) return;
  const termDeadline = performance.now() + graceMs;
  while (groupAlive(pgid)) {
    // Stryker disable next-line EqualityOperator: > for >= differs only at one instant of a continuous clock (its < twin is killed by the tests).
    if (performance.now() >= termDeadline) {
      signalGroup(pgid, "SIGKILL");
      // The kernel ends SIGKILLed processes at once; this wait (a second at most) only covers the
      // moment that takes.
      // Stryker disable next-line ArithmeticOperator: not waiting for it is seen only by a race with the kernel.
      const killDeadline = performance.now() + KILL_SETTLE_MS;
      // Stryker disable next-line LogicalOperator,ConditionalExpression,EqualityOperator: as above; waiting the whole second, or until the group is gone with no limit, only latency (or a process SIGKILL cannot end) tells.
      while (groupAlive(pgid) && performance.now() < killDeadline) await delay(POLL_MS);
      return;
    }
    await delay(POLL_MS);
  }
}
