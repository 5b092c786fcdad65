import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import { schemas } from "../schema/index.js";

/** Who holds a job: the process id, and an id of this process's life (pids are reused). */
export interface LockOwner {
  pid: number;
  /** Random per queue instance, so a restarted container whose App gets the same pid is not mistaken for the dead one. */
  instance: string;
}

/** Queue instances open in this process: a lock of this pid is live only when its instance is one of them. */
const openInstances = new Set<string>();

/** Marks an owner of this process open (true) or closed (false). */
export function markInstance(owner: LockOwner, open: boolean): void {
  if (open) openInstances.add(owner.instance);
  else openInstances.delete(owner.instance);
}

/** True when the owner of a lock is still running. */
export function ownerAlive(owner: LockOwner, self: LockOwner): boolean {
  if (owner.pid === self.pid) return owner.instance === self.instance || openInstances.has(owner.instance);
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function readOwner(path: string): Promise<LockOwner | undefined> {
  try {
    const owner = schemas().parseValid<LockOwner>("queue-lock", await readFile(path, "utf8"));
    return owner ? { pid: owner.pid, instance: owner.instance } : { pid: -1, instance: "torn" };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    // A torn lock (the writer died mid-write) has no live owner.
    return { pid: -1, instance: "torn" };
  }
}

/**
 * Takes the lock file of a job for `self`. A lock whose owner is dead is taken over; the
 * stale file is first moved aside (atomic) and checked to be the one judged dead, so two
 * processes recovering at once cannot both win. Returns false when a live process holds it.
 */
export async function acquireLock(path: string, self: LockOwner): Promise<boolean> {
  const content = JSON.stringify(schemas().validate("queue-lock", { ...self, at: new Date().toISOString() }, "queue lock"));
  for (let round = 0; round < 3; round += 1) {
    try {
      await writeFile(path, content, { flag: "wx" });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = await readOwner(path);
    if (holder === undefined) continue;
    if (ownerAlive(holder, self)) return false;
    const aside = `${path}.stale.${self.pid}.${self.instance}`;
    try {
      await rename(path, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    const moved = await readOwner(aside);
    if (moved && (moved.pid !== holder.pid || moved.instance !== holder.instance)) {
      // Another process took the lock over between our read and our move: give it back.
      await link(aside, path).catch(() => undefined);
      await rm(aside, { force: true });
      return false;
    }
    await rm(aside, { force: true });
  }
  return false;
}

/** Releases a lock this owner holds; a lock held by someone else is left alone. */
export async function releaseLock(path: string, self: LockOwner): Promise<void> {
  const holder = await readOwner(path);
  if (holder && holder.pid === self.pid && holder.instance === self.instance) await rm(path, { force: true });
}

/** The current holder of a lock, when it is alive. */
export async function liveHolder(path: string, self: LockOwner): Promise<LockOwner | undefined> {
  const holder = await readOwner(path);
  return holder && ownerAlive(holder, self) ? holder : undefined;
}
