/**
 * Git steps of a plan: the story branch, task commits merged onto it in plan order (never
 * resolving a conflict silently), the tasks an earlier run merged, and a task's changed files.
 * Every call goes through the workspace's hardened git.
 */
import { git, gitErrorOf, gitResult, HARNESS_IDENTITY, isValidBranchName, repositoryLocks, splitNul } from "../workspace/index.js";

/** The trailer of a task's merge commit; an earlier run's merges keep their tasks' work. */
export const TASK_TRAILER = "Harness-Task";

/** The story branch's tip; created from `baseRef` when the branch does not exist yet. */
export async function ensureStoryBranch(repoDir: string, branch: string, baseRef: string): Promise<string> {
  const ref = `refs/heads/${branch}`;
  const existing = await gitResult(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: repoDir, readOnly: true });
  if (existing.exitCode === 0) return (existing.stdout?.toString() ?? "").trim();
  if (!isValidBranchName(branch)) throw new Error(`'${branch}' is not a valid branch name`);
  const base = await git(["rev-parse", "--verify", `${baseRef}^{commit}`], { cwd: repoDir, readOnly: true });
  await repositoryLocks.with(repoDir, () => git(["update-ref", ref, base, ""], { cwd: repoDir }));
  return base;
}

/** Moves the story branch from `from` to `to`; refused when someone else moved it meanwhile. */
export async function advanceStoryBranch(repoDir: string, branch: string, from: string, to: string): Promise<void> {
  await repositoryLocks.with(repoDir, () => git(["update-ref", `refs/heads/${branch}`, to, from], { cwd: repoDir }));
}

/** How merging one task's commit went: the merge commit, or the conflicted paths. */
export type MergeResult = { merged: true; commit: string } | { merged: false; conflicts: string[] };

/**
 * Merges `commit` onto `tip` without a worktree (`git merge-tree --write-tree`): a clean merge
 * becomes a merge commit with `message`; a conflict names its paths and changes nothing.
 */
export async function mergeCommit(repoDir: string, tip: string, commit: string, message: string): Promise<MergeResult> {
  const args = ["merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", tip, commit];
  const result = await gitResult(args, { cwd: repoDir, readOnly: true });
  const fields = splitNul(result.stdout ?? Buffer.alloc(0));
  const tree = fields[0]?.trim() ?? "";
  if (result.exitCode === 1) return { merged: false, conflicts: [...new Set(fields.slice(1).filter((path) => path !== ""))] };
  // Exit 1 is git's "conflicts" answer, read above; anything else is a failure git's words explain.
  if (result.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(tree)) throw gitErrorOf(args, result);
  const merged = await git(["commit-tree", tree, "-p", tip, "-p", commit, "-F", "-"], { cwd: repoDir, input: message, env: { ...HARNESS_IDENTITY } });
  return { merged: true, commit: merged };
}

/** A commit on top of `tip` with its tree unchanged: records an outcome (a blocked story) on the branch. */
export async function emptyCommit(repoDir: string, tip: string, message: string): Promise<string> {
  return git(["commit-tree", `${tip}^{tree}`, "-p", tip, "-F", "-"], { cwd: repoDir, input: message, env: { ...HARNESS_IDENTITY } });
}

/** The task ids whose merge commits are on the branch's first-parent history. */
export async function mergedTasks(repoDir: string, tip: string): Promise<Set<string>> {
  const log = await git(["log", "--first-parent", `--format=%(trailers:key=${TASK_TRAILER},valueonly,separator=%x00)%x00`, tip], {
    cwd: repoDir,
    readOnly: true,
  });
  return new Set(
    log
      .split(/[\0\n]/)
      .map((value) => value.trim())
      .filter((value) => value !== ""),
  );
}

/** The paths a task changed between its base and its commit (renames as delete and add). */
export async function changedFiles(worktree: string, base: string, commit: string): Promise<string[]> {
  const args = ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", base, commit, "--"];
  const result = await gitResult(args, { cwd: worktree, readOnly: true });
  if (result.exitCode !== 0) throw gitErrorOf(args, result);
  return splitNul(result.stdout ?? Buffer.alloc(0)).filter((path) => path !== "");
}
