import { renderPullTitle } from "../github/report/index.js";
import { startRefusal, type StoryGitHub } from "../github/story/index.js";
import { storyBranch } from "../github/index.js";
import { git, gitResult, HARNESS_IDENTITY, resolveObjects } from "../workspace/index.js";
import { fetchRemoteBranch, setRemoteBranch } from "./repo-cache.js";

/** The story's branch as the run starts on it. */
export interface StoryHead {
  branch: string;
  headSha: string;
  /** The cache's local story branch as this call found it (before any run), undefined when it has none. */
  localTip: string | undefined;
}

/** The story's draft pull request and the branch it heads. */
export interface StoryPull extends StoryHead {
  pullNumber: number;
  pullUrl: string;
  /** GraphQL id of the pull request (to mark it ready for review). */
  pullNodeId: string;
  /** True when this call opened the pull request (the story's first start). */
  opened: boolean;
}

export interface StartStoryArgs {
  github: Pick<StoryGitHub, "ensureDraftPull" | "createStartBranch">;
  /** The repository cache, fetched just before. */
  repoDir: string;
  defaultBranch: string;
  issue: { number: number; title: string };
  authEnv: Record<string, string>;
  /** The branch has had no pull request in any state (asked by the runner just before): the draft is opened without a look. */
  noPullYet?: boolean;
  /** How the start's GitHub calls are asked while GitHub is down (the runner waits and asks again); once when absent. */
  untilAnswered?: <T>(work: () => Promise<T>) => Promise<T>;
  /** The start commit's date (now when absent). */
  now?: () => Date;
}

/**
 * Makes sure the story has its branch and draft pull request. On the first start: GitHub makes
 * an empty start commit on top of the default branch and the branch `harness/story-<N>` on it
 * (the Git data API: no push), and the GitHub room opens a draft pull request for it (the runner
 * then announces it on the issue, through the outbox). A later start (retry, resumption) reuses both.
 */
export async function ensureStoryPull(args: StartStoryArgs): Promise<StoryPull> {
  return openStoryPull(args, await startStoryHead(args));
}

/** The story's branch: made on its first start (the start commit, on GitHub and in the cache), found on a later one. */
export async function startStoryHead(args: StartStoryArgs): Promise<StoryHead> {
  const branch = storyBranch(args.issue.number);
  const remoteRef = `refs/remotes/origin/${branch}`;
  const base = `refs/remotes/origin/${args.defaultBranch}`;
  // The local branch and the default branch's tip and tree are read by the same git process.
  const [remoteTip, localTip, baseCommit, baseTree] = await resolveObjects(args.repoDir, [
    `${remoteRef}^{commit}`,
    `refs/heads/${branch}^{commit}`,
    `${base}^{commit}`,
    `${base}^{tree}`,
  ]);
  let headSha = remoteTip;
  if (!headSha) {
    if (!baseCommit || !baseTree) throw new Error(`the repository cache has no ${base} to start the story on`);
    headSha = await startStoryBranch(args, branch, baseCommit, baseTree);
  }
  return { branch, headSha, localTip };
}

/** The pull request of the story's branch, opened as a draft when it has none. */
export async function openStoryPull(args: StartStoryArgs, head: StoryHead): Promise<StoryPull> {
  const pull = await args.github.ensureDraftPull({
    branch: head.branch,
    defaultBranch: args.defaultBranch,
    issue: args.issue,
    ...(args.noPullYet === true ? { noPullYet: true } : {}),
  });
  return { ...head, ...pull };
}

/**
 * The start commit, made twice: by GitHub (with the branch on it) and in the cache by `git
 * commit-tree`, with the same tree, parent, message, identity and date. The same id means the
 * cache has the remote's branch already: its tracking ref is set, nothing is fetched. GitHub's
 * commit may differ (formatted or signed otherwise), or the branch may exist already (made
 * meanwhile): the branch is then fetched, and the remote's commit is the story's.
 */
async function startStoryBranch(args: StartStoryArgs, branch: string, parent: string, tree: string): Promise<string> {
  // One date, to the second, for author and committer, on both sides.
  const seconds = Math.floor((args.now ?? (() => new Date()))().getTime() / 1000);
  const date = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  const gitDate = `@${seconds} +0000`;
  // Given to git on its standard input, the message is taken as it is: byte for byte what GitHub is given.
  const message = `${renderPullTitle(args.issue)}\n\nStarted by story-harness.\n`;
  const signature = { name: HARNESS_IDENTITY.GIT_AUTHOR_NAME, email: HARNESS_IDENTITY.GIT_AUTHOR_EMAIL, date };
  const untilAnswered = args.untilAnswered ?? (<T>(work: () => Promise<T>) => work());
  const remote = untilAnswered(() => args.github.createStartBranch({ branch, tree, parent, message, signature })).catch((error: unknown) => {
    throw startRefusal(error);
  });
  remote.catch(() => undefined); // awaited below; a failure of the local commit must not leave it unhandled
  const local = await git(["commit-tree", tree, "-p", parent], {
    cwd: args.repoDir,
    input: message,
    env: { ...HARNESS_IDENTITY, GIT_AUTHOR_DATE: gitDate, GIT_COMMITTER_DATE: gitDate },
  });
  const made = await remote;
  if (made.state === "created" && made.sha === local) {
    await setRemoteBranch(args.repoDir, branch, local);
    return local;
  }
  await fetchRemoteBranch(args.repoDir, branch, args.authEnv);
  const [fetched] = await resolveObjects(args.repoDir, [`refs/remotes/origin/${branch}^{commit}`]);
  if (!fetched) throw new Error(`the story branch ${branch} that GitHub made is not in the fetched cache`);
  return fetched;
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
