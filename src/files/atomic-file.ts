/**
 * Atomic file writes for every record the harness keeps on disk (the provisioning receipt,
 * clean-clone results, queue jobs): a temp file beside the target, then a rename, so a reader
 * (or a restart after kill -9) sees the old content or the new one, never a torn file.
 */
import { randomBytes } from "node:crypto";
import { dirname } from "node:path";
import { nodeFileSystem, type AtomicFileSystem } from "./file-system.js";

export interface AtomicWriteOptions {
  /**
   * `now` (default): on stable storage when the call returns. `background`: visible to every
   * reader and safe from the process dying (kill -9) when the call returns — the kernel holds
   * it — and flushed to stable storage right after, off the caller's path. A power loss in
   * that window can leave the file empty or absent, never torn; readers must skip such a file.
   */
  flush?: "now" | "background";
}

let fs: AtomicFileSystem = nodeFileSystem;

/**
 * For tests only: makes every later call of this module go through `next` (a recording wrapper
 * around {@link nodeFileSystem}, say) and returns the file system used until now, to restore.
 */
export function useFileSystem(next: AtomicFileSystem): AtomicFileSystem {
  const previous = fs;
  fs = next;
  return previous;
}

/** The temp file a write of `path` goes through: `<path>.<pid>.<random>.tmp`, in the same folder. */
function tempPathFor(path: string): string {
  return `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
}

/**
 * Writes `data` to `path` synchronously and atomically; with `fsync` (the default) the file
 * and the rename are on stable storage when it returns.
 */
export function writeFileAtomicSync(path: string, data: string, options: { fsync?: boolean } = {}): void {
  const durable = options.fsync !== false;
  const temp = tempPathFor(path);
  const fd = fs.openSync(temp, "wx", 0o644);
  try {
    // Closed exactly once, before the rename: a second close after a failed rename could close
    // a descriptor another thread of the process has opened under the same number meanwhile.
    try {
      fs.writeSync(fd, data);
      if (durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, path);
  } catch (error) {
    // `force`: the folder may have gone with the temp file in it; the write's own error is the one to report.
    fs.rmSync(temp, { force: true });
    throw error;
  }
  if (durable) syncDirQuietly(dirname(path));
}

/** Writes `data` to `path` atomically; see {@link AtomicWriteOptions} for when it is durable. */
export async function writeFileAtomic(path: string, data: string, options: AtomicWriteOptions = {}): Promise<void> {
  const background = options.flush === "background";
  const temp = tempPathFor(path);
  try {
    // Every call goes to the thread pool: on the webhook's path a synchronous open() waits
    // behind the background flush's fsync for the same folder, and the whole App waits with it.
    const handle = await fs.open(temp, "wx", 0o644);
    try {
      await handle.writeFile(data);
      if (!background) await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, path);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  if (background) scheduleFlush(path);
  else await syncDirCoalesced(dirname(path));
}

/** A folder's flush under way, and the one callers arriving meanwhile share. */
interface DirSync {
  running: Promise<void>;
  next?: Promise<void>;
}
const dirSyncs = new Map<string, DirSync>();

/**
 * Flushes a folder, sharing the work between concurrent callers: a caller that arrives while a
 * flush runs waits for the one after it (its rename may have come too late for the running
 * one), and all such callers share that next flush. Under a burst of writes this turns one
 * fsync per file into a few.
 */
export function syncDirCoalesced(dir: string): Promise<void> {
  const current = dirSyncs.get(dir);
  if (current) {
    current.next ??= current.running.catch(ignore).then(() => {
      dirSyncs.delete(dir);
      return syncDirCoalesced(dir);
    });
    return current.next;
  }
  const state: DirSync = {
    running: syncDir(dir).finally(() => {
      if (!state.next) dirSyncs.delete(dir);
    }),
  };
  dirSyncs.set(dir, state);
  return state.running;
}

/** Flushes a folder's entries (a rename or an unlink) to disk. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes a rename durable where the file system allows fsync of a folder; atomicity does not depend on it. */
function syncDirQuietly(dir: string): void {
  try {
    const fd = fs.openSync(dir, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Some file systems refuse to fsync a folder; harmless.
  }
}

/** The longest a background write waits before its flush starts. */
export const BACKGROUND_FLUSH_DELAY_MS = 25;
/** The files of the batch whose flush has not started yet. */
let collecting: Set<string> | undefined;
/** Every batch not yet on stable storage, waiting or flushing. */
const batches = new Set<Promise<void>>();

/** Flushes files written with `flush: "background"`, their folders once each, in one batch. */
function scheduleFlush(path: string): void {
  // One batch every few milliseconds: under a burst of webhooks many files share a flush,
  // so the disk sees tens of fsyncs a second instead of hundreds.
  if (collecting) {
    collecting.add(path);
    return;
  }
  const paths = new Set([path]);
  collecting = paths;
  const batch = new Promise<void>((resolve) => setTimeout(resolve, BACKGROUND_FLUSH_DELAY_MS))
    .then(() => {
      collecting = undefined;
      return flushBatch(paths);
    })
    .finally(() => batches.delete(batch));
  batches.add(batch);
}

async function flushBatch(paths: Set<string>): Promise<void> {
  for (const file of paths) await syncFile(file);
  for (const dir of new Set([...paths].map((file) => dirname(file)))) await syncDirCoalesced(dir).catch(ignore);
}

/** Waits until every background write so far is on stable storage (for a clean shutdown and tests). */
export async function flushPendingWrites(): Promise<void> {
  // A batch already flushing counts too: a shutdown must not return between its fsyncs.
  while (batches.size > 0) await Promise.all(batches);
}

async function syncFile(path: string): Promise<void> {
  try {
    const handle = await fs.open(path, "r");
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

/** A failed flush of a folder is not the caller's failure (see {@link syncDirQuietly}). */
function ignore(): void {
  // Nothing to do.
}
