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
  await syncDir(dirname(path));
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
