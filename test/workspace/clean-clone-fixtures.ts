/**
 * Helpers for the clean-clone tests: real temporary repositories and the observations the
 * tests compare (the target's working-tree tree, a snapshot of everything in the target).
 */
import { createHash } from "node:crypto";
import { copyFileSync, lstatSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { initRepo, makeTempDir, removeTempDirs, writeFiles, type FileSpec } from "../support/tmp.js";

/** A fresh folder under the OS temp folder, removed by {@link removeTemps}. */
export const temp = (prefix = "cc-test-"): string => makeTempDir(prefix);
export const removeTemps = removeTempDirs;
/** Writes files (relative path → content, optional mode) under `dir`. */
export const write = writeFiles;

/** Runs git in `cwd` as the harness identity. */
export function run(cwd: string, ...args: string[]): Promise<string> {
  return git(args, { cwd, env: HARNESS_IDENTITY });
}

/** Runs git in `cwd` without taking optional locks, so observing a repository never changes it. */
export function look(cwd: string, ...args: string[]): Promise<string> {
  return git(args, { cwd, readOnly: true });
}

/** A repository at a new temp folder holding `files` in one commit on branch main. */
export async function repoWith(files: Readonly<Record<string, FileSpec>>): Promise<string> {
  const dir = temp("cc-repo-");
  await initRepo(dir, files);
  return dir;
}

/**
 * The tree `git add -A` would record for `repo`'s working tree, computed on a copy of its index
 * with new objects kept in a separate folder, so the target itself is untouched.
 */
export async function workingTreeTree(repo: string): Promise<string> {
  const scratch = temp("cc-tree-");
  const gitDir = await look(repo, "rev-parse", "--absolute-git-dir");
  const objects = await look(repo, "rev-parse", "--path-format=absolute", "--git-path", "objects");
  copyFileSync(join(gitDir, "index"), join(scratch, "index"));
  mkdirSync(join(scratch, "objects"));
  const env = { GIT_INDEX_FILE: join(scratch, "index"), GIT_OBJECT_DIRECTORY: join(scratch, "objects"), GIT_ALTERNATE_OBJECT_DIRECTORIES: objects };
  await git(["add", "-A"], { cwd: repo, env });
  return git(["write-tree"], { cwd: repo, env });
}

/** Every path under `dir` (the `.git` folder included) with its type, size, mode and mtime. */
function listing(dir: string, prefix = ""): string[] {
  const lines: string[] = [];
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    const relative = join(prefix, name);
    const stat = lstatSync(join(dir, relative));
    lines.push(`${relative} ${stat.mode.toString(8)} ${stat.size} ${stat.mtimeMs}`);
    if (stat.isDirectory()) lines.push(...listing(dir, relative));
  }
  return lines;
}

/** What must not change in a target the check only reads. */
export async function observe(repo: string): Promise<Record<string, string | string[]>> {
  const gitDir = await look(repo, "rev-parse", "--absolute-git-dir");
  return {
    index: createHash("sha256")
      .update(readFileSync(join(gitDir, "index")))
      .digest("hex"),
    head: await look(repo, "rev-parse", "HEAD"),
    symbolicHead: readFileSync(join(gitDir, "HEAD"), "utf8"),
    refs: await look(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
    stash: await look(repo, "stash", "list"),
    status: await look(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all"),
    files: listing(repo),
  };
}
