/**
 * One data directory, one App: `harness serve` holds `<HARNESS_HOME>/harness.lock` for its
 * whole life. Two processes on one folder would enqueue the same delivery twice, remove each
 * other's worktrees and prune refs the other needs, so a second one refuses to start. The
 * lock records pid and start time; a crash leaves a lock whose owner is dead, which the next
 * start takes over.
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { schemas } from "../schema/index.js";
import { acquireLock, liveHolder, newLockOwner, releaseLock, retireLockOwner, type LockOwner } from "./job-lock.js";
import type { FailureClass } from "../failure/index.js";

export const HOME_LOCK_FILE = "harness.lock";

/** Thrown when another live process holds the data directory. */
export class HarnessHomeInUseError extends Error {
  readonly failureClass = "environment" satisfies FailureClass;
  constructor(
    readonly harnessHome: string,
    readonly holder: LockOwner | undefined,
    since: string | undefined,
  ) {
    super(
      `HARNESS_HOME ${harnessHome} is in use by another story-harness process` +
        `${holder ? ` (pid ${holder.pid}${since ? `, since ${since}` : ""})` : ""}; ` +
        "one App per data directory: stop that process, or give this one its own HARNESS_HOME",
    );
    this.name = "HarnessHomeInUseError";
  }
}

/** A held data directory; `release` gives it up (at shutdown). */
export interface HomeClaim {
  owner: LockOwner;
  release(): Promise<void>;
}

/** Takes the data directory for this process, or throws {@link HarnessHomeInUseError}. */
export async function claimHarnessHome(harnessHome: string): Promise<HomeClaim> {
  await mkdir(harnessHome, { recursive: true });
  const path = join(harnessHome, HOME_LOCK_FILE);
  const owner = newLockOwner();
  if (!(await acquireLock(path, owner))) {
    retireLockOwner(owner);
    const holder = await liveHolder(path, owner);
    // Stryker disable next-line StringLiteral,ArrowFunction: a lock that cannot be read, read as bytes, or replaced by text that is not a lock names no time either way
    const text = await readFile(path, "utf8").catch(() => "");
    const since = schemas().parseValid<{ at: string }>("queue-lock", text)?.at;
    throw new HarnessHomeInUseError(harnessHome, holder, since);
  }
  return {
    owner,
    release: async () => {
      await releaseLock(path, owner);
      retireLockOwner(owner);
    },
  };
}
