import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { git, gitResult } from "./git.js";
import { isValidBranchName } from "./ref-name.js";
import { repositoryLocks } from "./repo-lock.js";
import type { FailureClass } from "../failure/index.js";

/** A task's linked worktree, checked out on the story branch. */
export interface TaskWorktree {
  taskId: string;
  path: string;
  branch: string;
  /** The commit the worktree started from. */
  base: string;
}

/** Why a task worktree could not be made. */
export class WorktreeError extends Error {
  readonly failureClass = "internal-error" satisfies FailureClass;
  constructor(
    readonly path: string,
    readonly branch: string,
    message: string,
  ) {
    super(message);
    this.name = "WorktreeError";
  }
}

/** Makes a name safe as one path component: story ids may be slugs or numbers. */
export function pathComponent(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[.-]+/, "");
  return safe === "" ? "_" : safe.slice(0, 80);
}

/**
 * A story's folder name (its worktrees, its runs): readable, and distinct for distinct story
 * ids. An id that is already a safe name is its own folder (`greet-users`); one that is not
 * gets a hash of the exact id, so `octo/repo#42` and `octo-repo/42` never share a folder.
 */
export function storyDirName(storyId: string): string {
  const safe = pathComponent(storyId);
  if (safe === storyId) return safe;
  return `${safe.slice(0, 71)}-${createHash("sha256").update(storyId).digest("hex").slice(0, 8)}`;
}

/** Where a task's worktree lives: one folder per task, so a story may own several over time. */
export function taskWorktreePath(harnessHome: string, storyId: string, taskId: string): string {
  return join(harnessHome, "worktrees", storyDirName(storyId), pathComponent(taskId));
}

export interface CreateTaskWorktreeArgs {
  /** The repository the branch lives in. Its own working tree and HEAD are not touched. */
  repoDir: string;
  harnessHome: string;
  storyId: string;
  taskId: string;
  branch: string;
  /** Where a new branch starts; an existing branch keeps its tip as the base. */
  baseRef: string;
  /**
   * Check out `baseRef` detached instead of `branch` (a task of a plan: several run beside
   * each other from one story branch, and their commits are merged onto it afterwards).
   */
  detach?: boolean;
}

/**
 * Creates a linked worktree for a task under `<harnessHome>/worktrees/<story>/<task>`,
 * checked out on `branch`: created from `baseRef` when it does not exist, otherwise its tip.
 */
export async function createTaskWorktree(args: CreateTaskWorktreeArgs): Promise<TaskWorktree> {
  const { repoDir, branch } = args;
  const path = taskWorktreePath(args.harnessHome, args.storyId, args.taskId);
  if (existsSync(path)) throw new WorktreeError(path, branch, `task worktree ${path} already exists`);
  // Checked here by git's rules: one git process less (ref-name.ts).
  if (!isValidBranchName(branch)) throw new WorktreeError(path, branch, `'${branch}' is not a valid branch name`);
  // A plan's task starts detached at the base; a story's task continues its branch when it exists.
  const [tip, start] = await resolveCommits(repoDir, [`refs/heads/${branch}`, args.baseRef]);
  const continues = !args.detach && tip !== undefined;
  const base = continues ? tip : start;
  if (base === undefined) throw new WorktreeError(path, branch, `'${args.baseRef}' names no commit in ${repoDir}`);
  const checkout = args.detach ? ["--detach", path, base] : continues ? [path, branch] : ["--no-track", "-b", branch, path, base];
  await mkdir(dirname(path), { recursive: true });
  await repositoryLocks.with(repoDir, () => git(["worktree", "add", "--quiet", ...checkout], { cwd: repoDir }));
  return { taskId: args.taskId, path, branch, base };
}

/**
 * The commit each of `refs` names (`<ref>^{commit}`), undefined for one that names none, from one
 * git process (`cat-file --batch-check`) instead of a `rev-parse` each.
 */
export async function resolveCommits(repoDir: string, refs: readonly string[]): Promise<Array<string | undefined>> {
  return resolveObjects(
    repoDir,
    refs.map((ref) => `${ref}^{commit}`),
  );
}

/**
 * The object each revision names (`refs/…^{commit}`, `refs/…^{tree}`), undefined for one that
 * names none, from one git process (`cat-file --batch-check`). A revision with a line break
 * would be two requests: it is not asked, and names nothing. Git answers each request with a
 * line: the object's id, or the request and why it has none (`<request> missing`), which holds
 * a space an id never does.
 */
export async function resolveObjects(repoDir: string, revisions: readonly string[]): Promise<Array<string | undefined>> {
  const asked = revisions.filter((revision) => !revision.includes("\n"));
  // Stryker disable next-line BooleanLiteral: cat-file takes no optional lock either way; readOnly says what the call promises
  const output = await git(["cat-file", "--batch-check=%(objectname)"], {
    cwd: repoDir,
    readOnly: true,
    input: asked.map((revision) => `${revision}\n`).join(""),
  });
  const lines = output.split("\n");
  const answers = new Map(asked.map((revision, index) => [revision, lines[index]]));
  return revisions.map((revision) => {
    const line = answers.get(revision);
    return line === undefined || line.includes(" ") ? undefined : line;
  });
}

/**
 * Removes a task worktree and its administrative entry, whatever it contains (installed
 * dependencies, a receipt, uncommitted files) and even when locked. The branch and its commits stay.
 */
export async function removeTaskWorktree(repoDir: string, path: string): Promise<void> {
  await repositoryLocks.with(repoDir, async () => {
    // Twice forced, so a locked worktree goes too. Git refuses a folder that is no longer its
    // worktree (removed by hand, or its .git file gone): the folder goes, and prune drops the entry.
    const removed = await gitResult(["worktree", "remove", "--force", "--force", path], { cwd: repoDir });
    await rm(path, { recursive: true, force: true });
    // A removal that worked took the entry with it: prune only after one git refused.
    if (removed.exitCode !== 0) await git(["worktree", "prune"], { cwd: repoDir });
  });
}
