/**
 * Git inside a sandbox. A task's worktree is a linked worktree: its `.git` is a file naming a
 * git folder inside the shared repository cache. Steps may read that state (a suite runs
 * `git status`, `git show HEAD:…`), never write it: the cache, its config, refs, hooks and
 * `info/` are read-only from inside, and the `.git` link the App's own git calls follow is put
 * back after every step, so repository code cannot point the App at a git folder of its own.
 */
import { rmSync, writeFileSync } from "node:fs";
import { readBoundedTextSync } from "../files/index.js";
import { isAbsolute, join, resolve } from "node:path";

/** A `.git` link, `commondir` or `alternates` file: a few lines. */
const MAX_GIT_FILE_BYTES = 64 * 1024;

/**
 * A small git file, or undefined. Bounded: a worktree's `.git` is written by the steps that run
 * there, and a FIFO, a symlink or a huge file in its place must not block or feed the App.
 */
function readText(path: string): string | undefined {
  try {
    return readBoundedTextSync(path, { maxBytes: MAX_GIT_FILE_BYTES });
  } catch {
    return undefined;
  }
}

/** The git folder a `.git` file names, or undefined when `dir/.git` is not such a file. */
function linkedGitDir(dir: string): string | undefined {
  const text = readText(join(dir, ".git"));
  const match = text === undefined ? null : /^gitdir: (.+)$/m.exec(text);
  return match?.[1] === undefined ? undefined : resolve(dir, match[1].trim());
}

/**
 * The folders git needs to read for work in `dir` that lie outside it: the linked git folder,
 * its common folder, and the object stores its alternates name. Empty for a repository whose
 * `.git` is a folder inside `dir`.
 */
export function gitReadPaths(dir: string): string[] {
  const gitDir = linkedGitDir(dir);
  if (gitDir === undefined) return [];
  const common = readText(join(gitDir, "commondir"));
  const commonDir = common === undefined ? gitDir : resolve(gitDir, common.trim());
  const paths = new Set([commonDir, gitDir]);
  const alternates = readText(join(commonDir, "objects", "info", "alternates")) ?? "";
  for (const line of alternates.split("\n")) {
    const entry = line.trim();
    if (entry === "" || entry.startsWith("#")) continue;
    paths.add(isAbsolute(entry) ? entry : resolve(join(commonDir, "objects"), entry));
  }
  return [...paths].filter((path) => ![...paths].some((other) => other !== path && path.startsWith(other + "/")));
}

/**
 * Remembers `dir/.git` when it is a link file and returns a function that puts it back as it
 * was (true when it had been changed). A step can write its worktree, so it can rewrite that
 * file; the App's next git call there must still reach the App's git folder.
 */
export function guardGitLink(dir: string): () => boolean {
  const path = join(dir, ".git");
  const original = readText(path);
  if (original === undefined) return () => false;
  const content = original;
  return () => {
    // Anything but the same regular file (removed, a FIFO, a symlink, other text) is written again below.
    if (readText(path) === content) return false;
    rmSync(path, { recursive: true, force: true });
    writeFileSync(path, content);
    return true;
  };
}

/** Whether `path` is `root` or inside it. */
export function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
}
