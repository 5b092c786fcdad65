/**
 * Warm worktrees: after a lockfile install succeeds, its `node_modules` is kept as a snapshot
 * under `HARNESS_HOME/cache/snapshots/`, and the next worktree of the same repository whose
 * install inputs match gets that tree by hard links instead of installing again.
 *
 * Hard links share file contents, so a write into one worktree's copy would change every
 * other. Snapshot files therefore lose their write bits and, when the App runs as root, are
 * owned by `nobody`, a user that does not exist inside the sandbox, so a step cannot chmod them
 * back; directories are each worktree's own, so creating, renaming or deleting files in a
 * worktree's `node_modules` never touches another's. A package that writes into one of its
 * own files fails with EACCES instead of changing its neighbours.
 *
 * An App that is not root cannot give its files away: a step runs as a uid mapped to the App's,
 * owns every file the App owns, and could `chmod u+w` a shared inode and poison the next story's
 * dependencies. Such an App never shares an inode between the snapshot and a worktree: it saves
 * and hands out copies (`cp --reflink=auto`: copy-on-write clones where the file system has them,
 * plain copies elsewhere). On this project's own node_modules (675 MB, 20,000 files, ext4 without
 * reflinks) linking took about 1 s and copying 3.5 to 5 s, both far below a cold install.
 *
 * Only installs whose result is decided by their inputs are snapshotted: a lockfile rung
 * (pnpm, npm, yarn), no root lifecycle scripts (they may build outside `node_modules`), no
 * workspaces. The key covers the lockfile, `package.json`, the install command, the platform,
 * the architecture and the Node.js version; the scope is the repository, so stories of
 * different repositories never share a snapshot.
 */
import { createHash } from "node:crypto";
import { chownSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { readBoundedFile, UnsafeFileError } from "../../files/index.js";
import { exec } from "../../exec/index.js";
import { git } from "../git.js";
import type { ResolvedProvision } from "./resolve.js";

/** Lockfiles of the rungs that may be snapshotted. */
const LOCKFILES: Partial<Record<ResolvedProvision["source"], string>> = { pnpm: "pnpm-lock.yaml", npm: "package-lock.json", yarn: "yarn.lock" };

/** Root scripts that npm, pnpm and yarn run on install; any of them makes an install unsafe to replay. */
const LIFECYCLE_SCRIPTS = ["preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare", "dependencies"];

/** Snapshots kept per repository; older ones are removed when a new one is saved. */
export const SNAPSHOTS_KEPT = 3;

/** The uid and gid of `nobody`, which owns snapshot files when the App runs as root. */
const NOBODY = 65534;

/** A worktree's snapshot identity: where its snapshot lives, or why it has none. */
export type SnapshotPlan = { eligible: true; dir: string; key: string; scopeDir: string } | { eligible: false; reason: string };

/** A package.json larger than this is not snapshotted. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** Nor a lockfile larger than this (the largest real ones are tens of MiB). */
const MAX_LOCKFILE_BYTES = 128 * 1024 * 1024;

/** The folder of every snapshot under `home`. */
export function snapshotsDir(home: string): string {
  return join(home, "cache", "snapshots");
}

/** Decides whether `worktree`'s install can be snapshotted, and under which key. */
export async function planSnapshot(worktree: string, resolved: Extract<ResolvedProvision, { argv: string[] }>, home: string): Promise<SnapshotPlan> {
  const lockfile = LOCKFILES[resolved.source];
  if (!lockfile) return { eligible: false, reason: `the ${resolved.source} rung is not a lockfile install` };
  let manifest: { scripts?: Record<string, unknown>; workspaces?: unknown };
  let manifestBytes: Buffer;
  try {
    // Bounded: the worktree is the agents' to write before a re-provisioning, and a FIFO or a symlink to the App's
    // files must neither block nor be read here.
    manifestBytes = await readBoundedFile(join(worktree, "package.json"), { maxBytes: MAX_MANIFEST_BYTES });
    manifest = JSON.parse(manifestBytes.toString()) as typeof manifest;
  } catch (error) {
    if (error instanceof UnsafeFileError && error.reason !== "missing") return { eligible: false, reason: `package.json ${error.detail}` };
    return { eligible: false, reason: "package.json is missing or not JSON" };
  }
  const scripts = Object.keys(manifest.scripts ?? {}).filter((name) => LIFECYCLE_SCRIPTS.includes(name));
  if (scripts.length > 0) return { eligible: false, reason: `package.json runs ${scripts.join(", ")} on install` };
  if (manifest.workspaces !== undefined || existsSync(join(worktree, "pnpm-workspace.yaml")))
    return { eligible: false, reason: "workspaces install more than the root node_modules" };
  if (lstatSync(join(worktree, "node_modules"), { throwIfNoEntry: false })) return { eligible: false, reason: "node_modules is part of the checkout" };
  // Stryker disable next-line BooleanLiteral: rev-parse takes no optional lock either way; readOnly says what the call promises
  const common = await git(["rev-parse", "--path-format=absolute", "--git-common-dir"], { cwd: worktree, readOnly: true });
  // The JSON array ends where it closes, so it needs no separator from the lockfile's bytes.
  const hash = createHash("sha256").update(JSON.stringify([resolved.source, resolved.argv, process.platform, process.arch, process.versions.node]));
  let lockBytes: Buffer;
  try {
    lockBytes = await readBoundedFile(join(worktree, lockfile), { maxBytes: MAX_LOCKFILE_BYTES });
  } catch (error) {
    if (error instanceof UnsafeFileError) return { eligible: false, reason: `${lockfile} ${error.detail}` };
    throw error;
  }
  hash.update(lockBytes).update("\0").update(manifestBytes);
  const key = hash.digest("hex").slice(0, 32);
  const scopeDir = join(snapshotsDir(home), createHash("sha256").update(common).digest("hex").slice(0, 16));
  return { eligible: true, dir: join(scopeDir, key), key, scopeDir };
}

/** True when the snapshot is complete (it appears only by rename, once whole). */
export function hasSnapshot(plan: SnapshotPlan): plan is Extract<SnapshotPlan, { eligible: true }> {
  return plan.eligible && existsSync(join(plan.dir, "node_modules"));
}

/**
 * How `cp` shares a tree between the snapshot and a worktree: hard links only when the App is
 * root (the files then belong to `nobody`, out of a step's reach), copies otherwise.
 */
export function shareFlags(asRoot: boolean = process.getuid?.() === 0): string[] {
  return asRoot ? ["-al"] : ["-a", "--reflink=auto"];
}

/** Gives `worktree` the snapshot's `node_modules` (see {@link shareFlags}); throws when `cp` fails. */
export async function linkSnapshot(plan: Extract<SnapshotPlan, { eligible: true }>, worktree: string): Promise<void> {
  // Stryker disable next-line ObjectLiteral: cp is given absolute paths (the folder it runs in is never read), and only a cp hanging for ten minutes meets the bound
  const result = await exec(["cp", ...shareFlags(), "--", join(plan.dir, "node_modules"), join(worktree, "node_modules")], {
    cwd: worktree,
    timeoutMs: 600_000,
  });
  if (result.exitCode !== 0) {
    rmSync(join(worktree, "node_modules"), { recursive: true, force: true });
    throw new Error(`linking the dependency snapshot failed: ${result.tail.trim()}`);
  }
  // Used now: the newest snapshots are the ones kept.
  const now = new Date();
  utimesSync(plan.dir, now, now);
}

/**
 * Keeps `worktree/node_modules` as the snapshot of `plan`. Nothing is saved when the tree
 * holds anything but files, folders and symlinks. Returns false when it was not saved.
 */
export async function saveSnapshot(plan: Extract<SnapshotPlan, { eligible: true }>, worktree: string): Promise<boolean> {
  const source = join(worktree, "node_modules");
  // Stryker disable next-line OptionalChaining: without node_modules the call would throw instead, which the one caller also reads as not saved
  if (!lstatSync(source, { throwIfNoEntry: false })?.isDirectory()) return false;
  mkdirSync(plan.scopeDir, { recursive: true });
  const building = `${plan.dir}.building-${process.pid}-${Date.now()}`;
  try {
    mkdirSync(building);
    // Stryker disable next-line ObjectLiteral: cp is given absolute paths (the folder it runs in is never read), and only a cp hanging for ten minutes meets the bound
    // As root the worktree's own files become the snapshot's, sealed under it; otherwise the
    // snapshot must be a copy, or the story that saved it could still edit it through its links.
    const copied = await exec(["cp", ...shareFlags(), "--", source, join(building, "node_modules")], { cwd: worktree, timeoutMs: 600_000 });
    if (copied.exitCode !== 0 || !sealTree(join(building, "node_modules"))) return false;
    try {
      renameSync(building, plan.dir);
    } catch {
      return false; // another worktree saved the same snapshot first
    }
    pruneSnapshots(plan.scopeDir);
    return true;
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}

/** Removes the write bits of every file (and hands them to `nobody` when root); false on a special file. */
function sealTree(dir: string): boolean {
  // Stryker disable next-line OptionalChaining: getuid exists on every POSIX platform, and the sandbox needs Linux
  const asRoot = process.getuid?.() === 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!sealTree(path)) return false;
    } else if (entry.isFile()) {
      const mode = lstatSync(path).mode & 0o7777;
      // Stryker disable next-line ConditionalExpression: the tests run as root, where always is the same; as another user chown would fail (EPERM)
      if (asRoot) chownSync(path, NOBODY, NOBODY);
      chmodSync(path, mode & ~0o222 & ~0o6000);
    } else if (!entry.isSymbolicLink()) {
      return false;
    }
  }
  return true;
}

/** Keeps the {@link SNAPSHOTS_KEPT} most recently used snapshots of one repository. */
function pruneSnapshots(scopeDir: string): void {
  const snapshots = readdirSync(scopeDir)
    .filter((name) => !name.includes(".building-"))
    .map((name) => ({ path: join(scopeDir, name), used: statSync(join(scopeDir, name)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  // Stryker disable next-line BooleanLiteral: force differs only when another save prunes the same snapshot between the listing and this removal (a race)
  for (const old of snapshots.slice(SNAPSHOTS_KEPT)) rmSync(old.path, { recursive: true, force: true });
}
