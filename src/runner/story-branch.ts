import { git, gitResult, linkedWorktreesOn, removeTaskWorktree, splitNul } from "../workspace/index.js";
import { withRepoCache } from "./repo-cache.js";
import { resolveRef } from "./story-start.js";

/**
 * Readies the cache's local story branch for a run: worktrees an earlier (killed) run left on
 * it are removed, so the run starts from a fresh worktree, and the branch is set to what the
 * remote has (`remoteTip`: the start commit, or the work pushed by an earlier run). A branch
 * already there (`localTip`) is left as it is; so is an absent one when `absentIsFine` (the
 * pipeline then makes it from the remote's branch, which is `remoteTip`): no git process.
 */
export async function prepareStoryBranch(args: {
  repoDir: string;
  branch: string;
  remoteTip: string;
  localTip: string | undefined;
  absentIsFine: boolean;
}): Promise<void> {
  // A worktree whose folder is gone is listed too (as prunable), so no `worktree prune` goes first.
  // Read from the cache's worktree entries in this process; git lists them when they look unusual.
  const stale = await withRepoCache(args.repoDir, async () => linkedWorktreesOn(args.repoDir, args.branch) ?? listWorktreesOn(args.repoDir, args.branch));
  // Outside the lock: removing a worktree takes the repository's lock itself.
  for (const stalePath of stale) await removeTaskWorktree(args.repoDir, stalePath);
  if (args.localTip === args.remoteTip || (args.localTip === undefined && args.absentIsFine)) return;
  await git(["update-ref", `refs/heads/${args.branch}`, args.remoteTip], { cwd: args.repoDir });
}

/** What `git worktree list` says: the worktrees on `branch`. */
async function listWorktreesOn(repoDir: string, branch: string): Promise<string[]> {
  const list = await gitResult(["worktree", "list", "--porcelain", "-z"], { cwd: repoDir, readOnly: true });
  const found: string[] = [];
  let path: string | undefined;
  for (const entry of splitNul(list.stdout ?? Buffer.alloc(0))) {
    if (entry.startsWith("worktree ")) path = entry.slice("worktree ".length);
    if (entry === `branch refs/heads/${branch}` && path) found.push(path);
  }
  return found;
}

/** The local tip of the story branch after a run. */
export function storyTip(repoDir: string, branch: string): Promise<string | undefined> {
  return resolveRef(repoDir, `refs/heads/${branch}`);
}
