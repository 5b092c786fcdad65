/**
 * Pushing a story's result, telling a refusal from a hiccup. GitHub refuses some pushes for
 * good (a file over its size limit, push protection, a pre-receive hook, a 403 for a token that
 * may not write there): the story is then
 * blocked as `push-refused`, never reported complete, and its work is kept as a bundle. A lost
 * connection or a 5xx is retried by the outbox, which records the push before it is tried and
 * carries it across restarts ({@link pushStoryWork} is how it pushes).
 */
import { join } from "node:path";
import type { PushWork } from "../github/story/index.js";
import type { FailureClass } from "../pipeline/index.js";
import { git, GitError, isForbiddenPush, isPushRefusal, refusalMessage } from "../workspace/index.js";
import { pushStoryBranch } from "./story-start.js";

/** The file a refused push's work is kept in, inside the run directory. */
export const UNPUSHED_BUNDLE = "unpushed-work.bundle";

export type PushOutcome = { pushed: true } | { pushed: false; refusal: string };

/** GitHub refused the push for good; the outbox does not retry it (`retriable: false`). */
export class PushRefusedError extends Error {
  readonly failureClass = "push-refused" satisfies FailureClass;
  readonly retriable = false;
  constructor(readonly refusal: string) {
    super(refusal);
    this.name = "PushRefusedError";
  }
}

/** Pushes `sha` as the story branch once; a refusal is returned, other failures thrown. */
export async function pushStoryResult(args: { repoDir: string; branch: string; sha: string; authEnv: Record<string, string> }): Promise<PushOutcome> {
  try {
    await pushStoryBranch(args);
    return { pushed: true };
  } catch (error) {
    if (error instanceof GitError && (isPushRefusal(error.kind) || isForbiddenPush(error))) return { pushed: false, refusal: refusalMessage(error.stderr) };
    throw error;
  }
}

/**
 * The git work of the outbox's push entries: one attempt with the credentials the GitHub room
 * minted for it. A refusal keeps the unpushed commits as a bundle in the run directory, then
 * throws {@link PushRefusedError}; a hiccup throws git's error, and the outbox tries again later.
 */
export const pushStoryWork: PushWork = async (push, authEnv) => {
  const outcome = await pushStoryResult({ repoDir: push.repoDir, branch: push.branch, sha: push.sha, authEnv });
  if (outcome.pushed) return;
  if (push.runDir) await keepUnpushedWork(push.repoDir, push.branch, push.sha, push.runDir);
  throw new PushRefusedError(outcome.refusal);
};

/** Saves the commits the remote does not have as a git bundle in the run directory; false when that failed. */
async function keepUnpushedWork(repoDir: string, branch: string, sha: string, runDir: string): Promise<boolean> {
  try {
    // A bundle holds refs, not bare commits; the ref also keeps the work in the cache.
    const ref = `refs/harness/unpushed/${branch}`;
    await git(["update-ref", ref, sha], { cwd: repoDir });
    await git(["bundle", "create", "--quiet", join(runDir, UNPUSHED_BUNDLE), ref, `^refs/remotes/origin/${branch}`], { cwd: repoDir });
    return true;
  } catch {
    return false;
  }
}
