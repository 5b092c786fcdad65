import { randomBytes } from "node:crypto";
import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import { isRunning, selfIdentity } from "../exec/index.js";
import { schemas } from "../schema/index.js";

/** Who holds a lock: one life of one process (pid and start time), and one queue in it. */
export interface LockOwner {
  pid: number;
  /** From `/proc/<pid>/stat` with the boot id: a later process that got the same pid is not mistaken for the dead one. */
  startTime: string;
  /** Random per holder in the process, so two queues of one process tell their locks apart. */
  instance: string;
}

/**
 * The holders alive in this process. Process-wide by nature: it answers "is this lock's
 * holder, which is this very process, still open?" for a queue closed and opened again.
 */
const openInstances = new Set<string>();

/** A fresh owner for this process, alive until {@link retireLockOwner}. */
export function newLockOwner(): LockOwner {
  const owner = { ...selfIdentity(), instance: randomBytes(8).toString("hex") };
  openInstances.add(owner.instance);
  return owner;
}

/** Ends an owner of this process: locks it left behind count as a dead holder's. */
export function retireLockOwner(owner: LockOwner): void {
  openInstances.delete(owner.instance);
}

/**
 * True when the owner of a lock is still running. An owner of this very process is alive while
 * it is open (the judge itself included: a retired owner's locks count as a dead holder's).
 */
export function ownerAlive(owner: LockOwner, self: LockOwner): boolean {
  if (owner.pid === self.pid && owner.startTime === self.startTime) return openInstances.has(owner.instance);
  return isRunning(owner);
}

/** A lock file as read: its owner, or none when it is torn (empty, cut short, not a lock). */
interface LockContent {
  owner?: LockOwner;
  text: string;
}

async function readLock(path: string): Promise<LockContent | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const owner = schemas().parseValid<LockOwner & { at: string }>("queue-lock", text);
  return owner ? { owner: { pid: owner.pid, startTime: owner.startTime, instance: owner.instance }, text } : { text };
}

/**
 * Creates `path` holding `content`, or fails with EEXIST. The content is written to a temp
 * file first and hard-linked into place (link fails when the name exists, like O_EXCL), so
 * no reader ever sees a lock without its owner: a torn lock can only be a crash's leftover.
 */
async function createExclusive(path: string, content: string): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    // Stryker disable next-line ObjectLiteral,StringLiteral: the temp name is new and random, so there is nothing at it for "wx" to refuse; it stays as a second guard
    await writeFile(temp, content, { flag: "wx" });
    await link(temp, path);
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * Takes a lock file for `self`. A lock whose owner is dead, or which is torn, is taken over;
 * the stale file is first moved aside (atomic) and checked to be the one judged dead, so two
 * processes recovering at once cannot both win. Returns false when a live process holds it.
 * A write failure (ENOSPC) is thrown, and nothing is left behind.
 */
export async function acquireLock(path: string, self: LockOwner): Promise<boolean> {
  const content = JSON.stringify(schemas().validate("queue-lock", { ...self, at: new Date().toISOString() }, "queue lock"));
  for (let round = 0; round < 3; round += 1) {
    try {
      await createExclusive(path, content);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const held = await readLock(path);
    if (held === undefined) continue;
    if (held.owner && ownerAlive(held.owner, self)) return false;
    const aside = `${path}.stale.${self.pid}.${self.instance}`;
    try {
      await rename(path, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    const moved = await readLock(aside);
    if (moved && moved.text !== held.text) {
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
  const held = await readLock(path);
  const owner = held?.owner;
  if (owner && owner.pid === self.pid && owner.startTime === self.startTime && owner.instance === self.instance) await rm(path, { force: true });
}

/** The current holder of a lock, when it is alive. */
export async function liveHolder(path: string, self: LockOwner): Promise<LockOwner | undefined> {
  const owner = (await readLock(path))?.owner;
  return owner && ownerAlive(owner, self) ? owner : undefined;
}
