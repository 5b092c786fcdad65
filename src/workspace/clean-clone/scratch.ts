/**
 * The scratch directory a clean clone lives in. It is created fresh for every check and removed
 * whatever happened, even when the suite left read-only folders behind (Go's module cache does).
 */
import { chmod, lstat, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Creates a fresh scratch directory under `root` (the OS temp folder by default). */
export function makeScratch(root: string = tmpdir()): Promise<string> {
  return mkdtemp(join(root, "harness-clean-clone-"));
}

/** Gives the owner write and search permission on every directory under `dir`, without following links. */
async function makeWritable(dir: string): Promise<void> {
  const stat = await lstat(dir);
  if (!stat.isDirectory()) return;
  await chmod(dir, (stat.mode & 0o777) | 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await makeWritable(join(dir, entry.name));
  }
}

/**
 * Removes the scratch directory. Symlinks inside (linked dependency roots) are removed, never
 * followed. When a first attempt fails on permissions, folders are made writable and it is
 * tried once more; a second failure is thrown.
 */
export async function removeScratch(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 2 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM" && code !== "ENOTEMPTY") throw error;
    await makeWritable(dir);
    await rm(dir, { recursive: true, force: true, maxRetries: 2 });
  }
}
