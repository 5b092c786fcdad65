/**
 * Pushing a story's result, telling a refusal from a hiccup. GitHub refuses some pushes for
 * good (a file over its size limit, push protection, a pre-receive hook): the story is then
 * blocked as `push-refused`, never reported complete. A lost connection or a 5xx is tried
 * again a few times before it fails the job.
 */
import { currentStepScope } from "../exec/index.js";
import { GitError } from "../workspace/index.js";
import { pushStoryBranch } from "./story-start.js";

export type PushOutcome = { pushed: true } | { pushed: false; refusal: string };

export interface PushArgs {
  repoDir: string;
  branch: string;
  sha: string;
  /** Fresh credentials for each attempt (a token may expire between them). */
  authEnv: () => Promise<Record<string, string>>;
  attempts?: number;
  /** Wait before the n-th retry (default 1 s, 2 s, 4 s…). */
  delayMs?: (retry: number) => number;
}

/** True when git's words say the server refused the push (not that it could not be reached). */
export function isRefusal(stderr: string): boolean {
  return /\[remote rejected\]|pre-receive hook declined|! \[rejected\]|push declined|GH0\d\d:|protected branch/i.test(stderr);
}

/** GitHub's words about a refusal: the `remote:` lines and the rejection, without git's noise. */
export function refusalMessage(stderr: string): string {
  const lines = stderr.split("\n").map((line) => line.trimEnd()).filter((line) => /^remote:|rejected|declined|^error:/i.test(line.trim()));
  return (lines.length > 0 ? lines : stderr.split("\n")).join("\n").trim().slice(0, 4000);
}

/** Pushes `sha` as the story branch; a refusal is returned, other failures retried then thrown. */
export async function pushStoryResult(args: PushArgs): Promise<PushOutcome> {
  const attempts = args.attempts ?? 3;
  const delay = args.delayMs ?? ((retry: number) => 1000 * 2 ** (retry - 1));
  for (let attempt = 1; ; attempt += 1) {
    try {
      await pushStoryBranch({ repoDir: args.repoDir, branch: args.branch, sha: args.sha, authEnv: await args.authEnv() });
      return { pushed: true };
    } catch (error) {
      if (error instanceof GitError && isRefusal(error.stderr)) return { pushed: false, refusal: refusalMessage(error.stderr) };
      // Stopping (SIGTERM): no retries, the job resumes on the next start.
      if (attempt >= attempts || currentStepScope()?.signal?.aborted) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay(attempt)));
    }
  }
}
