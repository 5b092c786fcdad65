import { git, gitResult, removeTaskWorktree, splitNul } from "../workspace/index.js";
import { withRepoCache } from "./repo-cache.js";
import { resolveRef } from "./story-start.js";

/**
 * Readies the cache's local story branch for a run: worktrees an earlier (killed) run left on
 * it are removed, so the run starts from a fresh worktree, and the branch is set to what the
 * remote has (`remoteTip`: the start commit, or the work pushed by an earlier run).
 */
export async function prepareStoryBranch(args: { repoDir: string; branch: string; remoteTip: string }): Promise<void> {
  // A worktree whose folder is gone is listed too (as prunable), so no `worktree prune` goes first.
  const list = await withRepoCache(args.repoDir, () => gitResult(["worktree", "list", "--porcelain", "-z"], { cwd: args.repoDir, readOnly: true }));
  const stale: string[] = [];
  let path: string | undefined;
  for (const entry of splitNul(list.stdout ?? Buffer.alloc(0))) {
    if (entry.startsWith("worktree ")) path = entry.slice("worktree ".length);
    if (entry === `branch refs/heads/${args.branch}` && path) stale.push(path);
  }
  // Outside the lock: removing a worktree takes the repository's lock itself.
  for (const stalePath of stale) await removeTaskWorktree(args.repoDir, stalePath);
  await git(["update-ref", `refs/heads/${args.branch}`, args.remoteTip], { cwd: args.repoDir });
}

/** The local tip of the story branch after a run. */
export function storyTip(repoDir: string, branch: string): Promise<string | undefined> {
  return resolveRef(repoDir, `refs/heads/${branch}`);
}
