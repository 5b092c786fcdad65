/**
 * Small reads of a worktree's git folder done in this process instead of by a git process:
 * the commit HEAD names right after a commit, and whether the index could hold a path. Each
 * answers "don't know" (undefined, or true for the index) whenever the layout is not the plain
 * one git writes by default (a reftable, a symbolic ref chain, index version 4, a split index),
 * and the caller then asks git as before.
 */
import { readdirSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { readBoundedFileSync, readBoundedTextSync, UnsafeFileError } from "../files/index.js";

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** The small git files read here (`.git`, `HEAD`, `commondir`, a loose ref) are a line each. */
const MAX_SMALL_FILE = 64 * 1024;
/** An index larger than this is left to git (the answer is then "might"). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

function read(path: string): string | undefined {
  let text: string | undefined;
  try {
    // Bounded: a worktree's `.git` is the agents' to write during a step (put back after it), and a FIFO there
    // must not block the App's thread.
    text = readBoundedTextSync(path, { maxBytes: MAX_SMALL_FILE });
  } catch {
    // Absent, a folder, a symlink, a FIFO, too large or unreadable: undefined.
  }
  return text;
}

/** The git folder of a worktree: `.git` itself, or where a linked worktree's `.git` file points. */
export function worktreeGitDir(worktree: string): string | undefined {
  const dotGit = join(worktree, ".git");
  const file = read(dotGit);
  if (file === undefined) return dotGit; // a folder (or nothing: the reads below then find nothing)
  const match = /^gitdir: (.+?)\r?\n?$/.exec(file);
  if (!match) return undefined;
  const dir = match[1] as string;
  return isAbsolute(dir) ? dir : resolve(worktree, dir);
}

/**
 * The git folders of a linked worktree whose top is `worktree`: its own (`gitDir`, where its
 * `.git` file points: `<common>/worktrees/<id>`) and the common one its `commondir` file names,
 * read from those files. Undefined for anything else (a plain repository, a folder inside a
 * worktree, another layout): the caller then asks git.
 */
export function linkedWorktreeDirs(worktree: string): { gitDir: string; commonDir: string } | undefined {
  const gitDir = worktreeGitDir(worktree);
  // A plain repository's `.git` folder (or none) has no commondir file either.
  const common = gitDir === undefined ? undefined : read(join(gitDir, "commondir"))?.trim();
  // Stryker disable next-line ConditionalExpression: equivalent, an undefined gitDir leaves common undefined; the test narrows the type
  if (gitDir === undefined || common === undefined || common === "") return undefined;
  const commonDir = resolve(gitDir, common);
  return read(join(commonDir, "HEAD")) === undefined ? undefined : { gitDir, commonDir };
}

/**
 * The commit HEAD of `worktree` names, read from its files: a detached HEAD's id, or the loose
 * ref its branch points at (a commit just made always writes it). Undefined when that is not
 * how they are laid out.
 */
export function readHeadCommit(worktree: string): string | undefined {
  const gitDir = worktreeGitDir(worktree);
  if (gitDir === undefined) return undefined;
  const head = read(join(gitDir, "HEAD"))?.trim();
  // Stryker disable next-line ConditionalExpression: equivalent, the regular expressions below match neither an undefined HEAD nor the "undefined" it would be read as
  if (head === undefined) return undefined;
  if (OBJECT_ID.test(head)) return head;
  const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
  if (ref === undefined || ref.split("/").includes("..")) return undefined;
  const common = read(join(gitDir, "commondir"))?.trim();
  const commonDir = common === undefined ? gitDir : resolve(gitDir, common);
  return read(join(commonDir, ref))?.trim().match(OBJECT_ID)?.[0];
}

/**
 * False only when the worktree's index certainly holds no entry for `path`: an index of
 * version 2 or 3 stores every entry's full path, so one whose bytes nowhere contain the path
 * cannot list it. True when it might (the bytes are there, the index is of another version,
 * split, or unreadable).
 */
export function indexMayHold(worktree: string, path: string): boolean {
  const gitDir = worktreeGitDir(worktree);
  // Stryker disable next-line ConditionalExpression: equivalent, join() would throw on an undefined folder and the catch below answers true to that too
  if (gitDir === undefined) return true;
  let index: Buffer;
  try {
    index = readBoundedFileSync(join(gitDir, "index"), { maxBytes: MAX_INDEX_BYTES });
  } catch (error) {
    // No index: nothing is staged. Anything else (too large, not a regular file): git has to say.
    return !(error instanceof UnsafeFileError && error.reason === "missing");
  }
  if (index.length < 12 || index.toString("latin1", 0, 4) !== "DIRC") return true;
  const version = index.readUInt32BE(4);
  if (version !== 2 && version !== 3) return true;
  // A split index keeps entries in a shared file too (its "link" extension).
  if (index.includes("link", 12, "latin1")) return true;
  return index.includes(Buffer.from(path), 12);
}

/**
 * The folders of the linked worktrees of the bare repository at `gitDir` (a repository cache)
 * that have `branch` checked out, read from its `worktrees/<id>/HEAD` and `gitdir` files as
 * `git worktree list` reads them (a worktree whose folder is gone is listed too). Undefined
 * when `gitDir` is no git folder or an entry is not laid out that way, and git has to say.
 */
export function linkedWorktreesOn(gitDir: string, branch: string): string[] | undefined {
  if (read(join(gitDir, "HEAD")) === undefined) return undefined;
  const admin = join(gitDir, "worktrees");
  let ids: string[];
  try {
    ids = readdirSync(admin);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? [] : undefined;
  }
  const found: string[] = [];
  for (const id of ids) {
    const head = read(join(admin, id, "HEAD"));
    const dotGit = read(join(admin, id, "gitdir"))?.trim();
    if (head === undefined || dotGit === undefined || !dotGit.endsWith("/.git")) return undefined;
    if (head.trim() === `ref: refs/heads/${branch}`) found.push(dotGit.slice(0, -"/.git".length));
  }
  return found;
}
