/**
 * Re-admission picks up the base: before a blocked story runs again, the repository's current
 * default branch is merged into its story branch, so a fix made there (a provisioning script, a
 * broken test) is what the new run works on. The merge is made without a worktree; a conflict
 * changes nothing (the story branch and its work stay as they were) and blocks the story as
 * `base-conflict`, naming the files.
 */
import { mergeCommit, type FailureClass } from "../pipeline/index.js";
import { git, gitResult } from "../workspace/index.js";
import { withRepoCache } from "./repo-cache.js";
import { resolveRef } from "./story-start.js";

/** How many conflicting paths the detail names before it says how many more there are. */
const MAX_NAMED_FILES = 50;

/** The default branch cannot be merged into the story branch without a person resolving it. */
export class BaseConflictError extends Error {
  readonly failureClass = "base-conflict" satisfies FailureClass;

  constructor(
    readonly branch: string,
    readonly defaultBranch: string,
    readonly files: readonly string[],
  ) {
    super(baseConflictDetail(branch, defaultBranch, files));
    this.name = "BaseConflictError";
  }
}

/** What the check run and the status comment say about a conflict (file names are shown in a code block). */
export function baseConflictDetail(branch: string, defaultBranch: string, files: readonly string[]): string {
  const named = files.slice(0, MAX_NAMED_FILES).map((file) => `  ${JSON.stringify(file).slice(1, -1)}`);
  const more = files.length > MAX_NAMED_FILES ? [`  … and ${files.length - MAX_NAMED_FILES} more`] : [];
  return [
    `Re-admission merges ${defaultBranch} into ${branch} before the story runs again, and the merge conflicts in ${files.length === 1 ? "this file" : `these ${files.length} files`}:`,
    ...named,
    ...more,
    "",
    `Nothing was changed: ${branch} and its work are as they were. Merge ${defaultBranch} into ${branch} and resolve the conflicts (or push the resolution), then retry.`,
  ].join("\n");
}

export type BaseMergeResult = { state: "up-to-date" } | { state: "merged"; commit: string; base: string };

/**
 * Merges `refs/remotes/origin/<defaultBranch>` into the cache's local story branch (already set
 * to what the remote holds). The merge commit stays local: the run starts from it, and the
 * story's push delivers it with the work. Throws {@link BaseConflictError} on a conflict.
 */
export async function mergeDefaultBranch(args: { repoDir: string; branch: string; defaultBranch: string }): Promise<BaseMergeResult> {
  const { repoDir, branch, defaultBranch } = args;
  return withRepoCache(repoDir, async () => {
    const story = await resolveRef(repoDir, `refs/heads/${branch}`);
    const base = await resolveRef(repoDir, `refs/remotes/origin/${defaultBranch}`);
    if (!story || !base) return { state: "up-to-date" } as const;
    const contained = await gitResult(["merge-base", "--is-ancestor", base, story], { cwd: repoDir, readOnly: true });
    if (contained.exitCode === 0) return { state: "up-to-date" } as const;
    const result = await mergeCommit(
      repoDir,
      story,
      base,
      `Merge ${defaultBranch} into ${branch}\n\nstory-harness brought the story branch up to date with ${defaultBranch} before re-admitting it.\n`,
    );
    if (!result.merged) throw new BaseConflictError(branch, defaultBranch, result.conflicts);
    // Refused if anything moved the branch meanwhile.
    await git(["update-ref", `refs/heads/${branch}`, result.commit, story], { cwd: repoDir });
    return { state: "merged", commit: result.commit, base } as const;
  });
}
