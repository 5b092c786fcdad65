/**
 * Test helpers: real temporary directories and real git repositories. Every directory made
 * here lives under the OS temp folder and is removed by {@link removeTempDirs} (call it from
 * `afterAll`).
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";

const made: string[] = [];

/** A fresh empty directory under the OS temp folder (its real path, symlinks resolved). */
export function makeTempDir(prefix = "harness-test-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/** Removes every directory {@link makeTempDir} made in this test file. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A file's content, optionally with a mode (for example 0o755 for an executable script). */
export type FileSpec = string | { content: string | Buffer; mode?: number };

/** Writes `files` (relative path → content) under `dir`, creating folders as needed. */
export function writeFiles(dir: string, files: Readonly<Record<string, FileSpec>>): void {
  for (const [relative, spec] of Object.entries(files)) {
    const path = join(dir, relative);
    mkdirSync(dirname(path), { recursive: true });
    const content = typeof spec === "string" ? spec : spec.content;
    writeFileSync(path, content);
    if (typeof spec !== "string" && spec.mode !== undefined) chmodSync(path, spec.mode);
  }
}

/**
 * Makes `dir` a git repository on branch `main` holding `files` in one commit (none when
 * `files` is empty). Returns the commit id, or undefined when nothing was committed.
 */
export async function initRepo(dir: string, files: Readonly<Record<string, FileSpec>> = {}): Promise<string | undefined> {
  mkdirSync(dir, { recursive: true });
  await git(["-c", "init.defaultBranch=main", "init", "-q"], { cwd: dir });
  writeFiles(dir, files);
  if (Object.keys(files).length === 0) return undefined;
  return commitAll(dir, "initial");
}

/** Stages everything in `dir` and commits it as the harness; returns the new commit id. */
export async function commitAll(dir: string, message: string): Promise<string> {
  await git(["add", "-A"], { cwd: dir });
  await git(["commit", "-q", "--allow-empty", "-m", message], { cwd: dir, env: HARNESS_IDENTITY });
  return git(["rev-parse", "HEAD"], { cwd: dir, readOnly: true });
}

/** Adds a linked worktree of `repo` at `path` on a new branch; returns `path`. */
export async function addWorktree(repo: string, path: string, branch = `wt-${Date.now()}-${made.length}`): Promise<string> {
  await git(["worktree", "add", "-q", "-b", branch, path], { cwd: repo });
  return path;
}

/**
 * True while `pid` runs. A zombie (dead, waiting for a parent that may never reap it, as under
 * some container init processes) counts as gone.
 */
export function isRunning(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  return state !== "Z" && state !== "X";
}

/** Reads a pid a test child wrote to `path`. */
export function readPid(path: string): number {
  const pid = Number(readFileSync(path, "utf8").trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid in ${path}`);
  return pid;
}

/**
 * Whether a live process anywhere on the host has `tag` in its command line. A process
 * started inside a sandbox has a pid of its own namespace there, so tests find it by a tag.
 */
export function processWithTag(tag: string): boolean {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "latin1").includes(tag) && isRunning(Number(name))) return true;
    } catch {
      // Gone while we looked.
    }
  }
  return false;
}
