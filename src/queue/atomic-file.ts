import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { dirname, join, basename } from "node:path";

/**
 * Writes `data` to `path` so that a reader (or a restart after kill -9) sees either the old
 * content or the new one, never a torn file: a temp file in the same folder, fsync, rename,
 * then fsync of the folder so the rename itself survives a crash.
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const handle = await open(temp, "w");
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirCoalesced(dirname(path));
}

const dirSyncs = new Map<string, { running: Promise<void>; next?: Promise<void> }>();

/**
 * Flushes a folder, sharing the work between concurrent callers: a caller that arrives while a
 * flush runs waits for the one after it (its rename may have come too late for the running
 * one), and all such callers share that next flush. Under a burst of webhooks this turns one
 * fsync per job into a few.
 */
export function syncDirCoalesced(dir: string): Promise<void> {
  const current = dirSyncs.get(dir);
  if (!current) {
    const running = syncDir(dir).finally(() => {
      const state = dirSyncs.get(dir);
      if (state?.running === running && !state.next) dirSyncs.delete(dir);
    });
    dirSyncs.set(dir, { running });
    return running;
  }
  current.next ??= current.running.catch(() => undefined).then(() => {
    dirSyncs.delete(dir);
    return syncDirCoalesced(dir);
  });
  return current.next;
}

/** Flushes a folder's entries (a rename or an unlink) to disk. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
