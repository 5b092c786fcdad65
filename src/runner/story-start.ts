import { renderPullTitle, storyBranch, type StoryGitHub } from "../github/index.js";
import { git, gitResult, HARNESS_IDENTITY, resolveCommits } from "../workspace/index.js";

/** The story's draft pull request and the branch it heads. */
export interface StoryPull {
  branch: string;
  pullNumber: number;
  pullUrl: string;
  /** GraphQL id of the pull request (to mark it ready for review). */
  pullNodeId: string;
  headSha: string;
  /** The cache's local story branch as this call found it (before any run), undefined when it has none. */
  localTip: string | undefined;
  /** True when this call opened the pull request (the story's first start). */
  opened: boolean;
}

export interface StartStoryArgs {
  github: Pick<StoryGitHub, "ensureDraftPull">;
  /** The repository cache, fetched just before. */
  repoDir: string;
  defaultBranch: string;
  issue: { number: number; title: string };
  authEnv: Record<string, string>;
  /** The branch has had no pull request in any state (asked by the runner just before): the draft is opened without a look. */
  noPullYet?: boolean;
}

/**
 * Makes sure the story has its branch and draft pull request. On the first start: an empty
 * start commit on top of the default branch is pushed as `harness/story-<N>`, and the GitHub
 * room opens a draft pull request for it (the runner then announces it on the issue, through
 * the outbox). A later start (retry, resumption) reuses both.
 */
export async function ensureStoryPull(args: StartStoryArgs): Promise<StoryPull> {
  const branch = storyBranch(args.issue.number);
  const remoteRef = `refs/remotes/origin/${branch}`;
  // The local branch is read by the same git process: the runner moves it only when it is elsewhere.
  const [remoteTip, localTip] = await resolveCommits(args.repoDir, [remoteRef, `refs/heads/${branch}`]);
  let headSha = remoteTip;
  if (!headSha) {
    const base = `refs/remotes/origin/${args.defaultBranch}`;
    headSha = await git(["commit-tree", `${base}^{tree}`, "-p", base, "-m", `${renderPullTitle(args.issue)}\n\nStarted by story-harness.`], {
      cwd: args.repoDir,
      env: HARNESS_IDENTITY,
    });
    // The push moves `refs/remotes/origin/<branch>` too (the cache's fetch refspec maps it): no update-ref of our own.
    await git(["push", "--quiet", "origin", `${headSha}:refs/heads/${branch}`], { cwd: args.repoDir, env: args.authEnv, timeoutMs: 600_000 });
  }
  const pull = await args.github.ensureDraftPull({ branch, defaultBranch: args.defaultBranch, issue: args.issue, ...(args.noPullYet === true ? { noPullYet: true } : {}) });
  return { branch, headSha, localTip, ...pull };
}

/** The commit a ref points at, or undefined when it does not exist. */
export async function resolveRef(repoDir: string, ref: string): Promise<string | undefined> {
  const result = await gitResult(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: repoDir, readOnly: true });
  return result.exitCode === 0 ? result.stdout?.toString().trim() : undefined;
}

/**
 * Pushes the story branch's new tip (a fast-forward of what the remote has). Git itself then
 * moves `refs/remotes/origin/<branch>` to it: the cache's `remote.origin.fetch` maps the
 * remote's branches there, and a push updates the tracking ref of every ref it pushed.
 */
export async function pushStoryBranch(args: { repoDir: string; branch: string; sha: string; authEnv: Record<string, string> }): Promise<void> {
  await git(["push", "--quiet", "origin", `${args.sha}:refs/heads/${args.branch}`], { cwd: args.repoDir, env: args.authEnv, timeoutMs: 600_000 });
}
