import { randomBytes } from "node:crypto";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { dirname, join, basename } from "node:path";

export interface AtomicWriteOptions {
  /**
   * `now` (default): on stable storage when the call returns. `background`: visible to every
   * reader and safe from the process dying (kill -9) when the call returns — the kernel holds
   * it — and flushed to stable storage right after, off the caller's path. A power loss in
   * that window can leave the file empty or absent, never torn; readers must skip such a file.
   */
  flush?: "now" | "background";
}

/**
 * Writes `data` to `path` so that a reader (or a restart after kill -9) sees either the old
 * content or the new one, never a torn file: a temp file in the same folder, fsync, rename,
 * then fsync of the folder so the rename itself survives a crash.
 */
export async function writeFileAtomic(path: string, data: string, options: AtomicWriteOptions = {}): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  if (options.flush === "background") {
    // Small files: synchronous calls cost microseconds and spare two thread-pool round trips
    // on the webhook's path.
    try {
      writeFileSync(temp, data);
      renameSync(temp, path);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    scheduleFlush(path);
    return;
  }
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

/** The longest a background write waits before its flush starts. */
export const BACKGROUND_FLUSH_DELAY_MS = 25;
const pendingFlush = new Set<string>();
let flushing: Promise<void> | undefined;

/** Flushes files written with `flush: "background"`, their folders once each, in one batch. */
function scheduleFlush(path: string): void {
  pendingFlush.add(path);
  // One batch every few milliseconds: under a burst of webhooks many files share a flush,
  // so the disk sees tens of fsyncs a second instead of hundreds.
  flushing ??= new Promise<void>((resolve) => setTimeout(resolve, BACKGROUND_FLUSH_DELAY_MS)).then(async () => {
    const paths = [...pendingFlush];
    pendingFlush.clear();
    flushing = undefined;
    for (const file of paths) await syncFile(file);
    for (const dir of new Set(paths.map((file) => dirname(file)))) await syncDirCoalesced(dir).catch(() => undefined);
  });
}

/** Waits until every background write so far is on stable storage (for a clean shutdown and tests). */
export async function flushPendingWrites(): Promise<void> {
  while (flushing) await flushing;
}

async function syncFile(path: string): Promise<void> {
  try {
    const handle = await open(path, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Gone already (a finished job is removed) or unreadable: nothing left to flush. A disk
    // that fails fsync fails the next write loudly.
  }
}
