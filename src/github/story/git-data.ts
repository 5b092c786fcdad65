/**
 * A story's start through GitHub's Git data API: the tips of the branches its cache tracks
 * (so the cache fetches only when it is behind), and the empty start commit and branch made by
 * GitHub itself instead of a `git push` (no pack, no receive-pack on either side).
 */
import type { FailureClass } from "../../pipeline/index.js";
import type { AppOctokit } from "./installation.js";

/** Who the start commit is by, and when: given explicitly, so the cache can make the very same commit. */
export interface CommitSignature {
  name: string;
  email: string;
  /** ISO 8601 in UTC, to the second (`2026-01-01T00:00:00Z`). */
  date: string;
}

export interface StartCommitArgs {
  owner: string;
  repo: string;
  branch: string;
  tree: string;
  parent: string;
  message: string;
  signature: CommitSignature;
}

/** The branch this call made on GitHub's commit (`sha`), or one that existed already (its tip is the remote's, to be fetched). */
export type StartBranch = { state: "created"; sha: string } | { state: "exists" };

/**
 * GitHub refused to make the start commit or branch for good (a 403, a 404, a 422 other than an
 * existing branch): blocked as a refused start push is (`git-failed`), with GitHub's words.
 */
export class StoryStartRefusedError extends Error {
  readonly failureClass = "git-failed" satisfies FailureClass;
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(`GitHub refused the story's start branch (HTTP ${status}): ${message}`);
    this.name = "StoryStartRefusedError";
  }
}

/**
 * The tips of the remote's branches a story's fetch brings: `defaultBranch` exactly, and every
 * branch whose name begins with `prefix` (`matching-refs` is a prefix match, as the fetch's
 * `<prefix>*` refspec is). Branch name → commit id; a default branch GitHub does not have is
 * absent. Two requests, asked at once.
 */
export async function readBranchTips(
  octokit: AppOctokit,
  args: { owner: string; repo: string; defaultBranch: string; prefix: string },
): Promise<Map<string, string>> {
  const { owner, repo } = args;
  const [story, base] = await Promise.all([
    octokit.rest.git.listMatchingRefs({ owner, repo, ref: `heads/${args.prefix}` }),
    octokit.rest.git.getRef({ owner, repo, ref: `heads/${args.defaultBranch}` }).then(
      (answer) => [answer.data],
      (error: unknown) => {
        if (statusOf(error) === 404) return [];
        throw error;
      },
    ),
  ]);
  const tips = new Map<string, string>();
  for (const ref of [...story.data, ...base]) {
    // `getRef` of a missing ref may answer with the refs it begins; only the exact name counts.
    const name = ref.ref.replace(/^refs\/heads\//, "");
    if (ref.ref.startsWith("refs/heads/") && ref.object.type === "commit" && (name === args.defaultBranch || name.startsWith(args.prefix)))
      tips.set(name, ref.object.sha);
  }
  return tips;
}

/**
 * Makes the start commit (`tree`, one parent, the message, author and committer as given) and
 * the branch `refs/heads/<branch>` on it. A branch that exists already (someone made it
 * meanwhile, or an earlier try of this call did) is `exists`: its tip is whatever the remote has.
 * GitHub's other answers are thrown as octokit gives them: the caller waits on a 5xx and turns
 * a final refusal into {@link StoryStartRefusedError} ({@link startRefusal}).
 */
export async function createStartBranch(octokit: AppOctokit, args: StartCommitArgs): Promise<StartBranch> {
  const { owner, repo } = args;
  const commit = await octokit.rest.git.createCommit({
    owner,
    repo,
    message: args.message,
    tree: args.tree,
    parents: [args.parent],
    author: { ...args.signature },
    committer: { ...args.signature },
  });
  try {
    await octokit.rest.git.createRef({ owner, repo, ref: `refs/heads/${args.branch}`, sha: commit.data.sha });
    return { state: "created", sha: commit.data.sha };
  } catch (error) {
    if (statusOf(error) === 422 && /reference already exists/i.test(messageOf(error))) return { state: "exists" };
    throw error;
  }
}

/** A final answer of GitHub to {@link createStartBranch} as the story's typed error; anything else as it is. */
export function startRefusal(error: unknown): unknown {
  const status = statusOf(error);
  return status === undefined ? error : new StoryStartRefusedError(status, messageOf(error));
}

function statusOf(error: unknown): number | undefined {
  const status = typeof error === "object" && error !== null ? (error as { status?: unknown }).status : undefined;
  return typeof status === "number" ? status : undefined;
}

/** GitHub's own message (the response body's), else the error's. */
function messageOf(error: unknown): string {
  const data = typeof error === "object" && error !== null ? (error as { response?: { data?: { message?: unknown } } }).response?.data : undefined;
  if (typeof data?.message === "string") return data.message;
  return error instanceof Error ? error.message : String(error);
}
