/**
 * The scratch directory a clean clone lives in. It is created fresh for every check and removed
 * whatever happened, even when the suite left read-only folders behind (Go's module cache does).
 */
import { chmod, lstat, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isRunning, selfIdentity } from "../../exec/index.js";
import { writeFileAtomicSync } from "../../files/index.js";

const SCRATCH_PREFIX = "harness-clean-clone-";

/**
 * Creates a fresh scratch directory under `root` (the OS temp folder by default) and records,
 * beside it (`<dir>.owner`), which process made it: after kill -9 a restart removes the
 * scratch of a dead owner ({@link reapScratch}) instead of leaving it in TMPDIR for good.
 */
export async function makeScratch(root: string = tmpdir()): Promise<string> {
  const dir = await mkdtemp(join(root, SCRATCH_PREFIX));
  const owner = selfIdentity();
  // Whole or not at all (a rename): another process reaping this folder meanwhile reads a live
  // owner or no record, never a half-written one it would take for a dead owner's.
  try {
    writeFileAtomicSync(`${dir}.owner`, JSON.stringify({ pid: owner.pid, startTime: owner.startTime }), { fsync: false });
  } catch {
    // No record: the folder is removed by its own check's end, only a crash would leave it.
  }
  return dir;
}

/** Removes the scratch folders under `root` whose recorded owner is dead; returns their paths. */
export async function reapScratch(root: string = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(SCRATCH_PREFIX) || !name.endsWith(".owner")) continue;
    const dir = join(root, name.slice(0, -".owner".length));
    let owner: { pid?: unknown; startTime?: unknown } | undefined;
    try {
      owner = JSON.parse(await readFile(`${dir}.owner`, "utf8")) as { pid?: unknown; startTime?: unknown };
      // Stryker disable next-line BlockStatement: owner is still undefined when the parse threw
    } catch {
      owner = undefined;
    }
    const live =
      owner &&
      // The type checks keep isRunning's contract; isRunning itself finds no process for a pid that is no integer or a start time that differs.
      // Stryker disable next-line ConditionalExpression: see above
      typeof owner.pid === "number" &&
      typeof owner.startTime === "string" &&
      isRunning({ pid: owner.pid, startTime: owner.startTime });
    if (live) continue;
    await removeScratch(dir);
    removed.push(dir);
  }
  return removed;
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
  await removeTree(dir);
  // Last: a scratch that could not be removed keeps its owner record, so a later start retries.
  await rm(`${dir}.owner`, { force: true });
}

async function removeTree(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 2 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM" && code !== "ENOTEMPTY") throw error;
    await makeWritable(dir);
    await rm(dir, { recursive: true, force: true, maxRetries: 2 });
  }
}
