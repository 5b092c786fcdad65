/**
 * Delivering a finished story: push its work, then let its end be reported. The end the
 * pipeline reported is held until the push went through, so the check runs never say
 * "success" about work the pull request does not hold; a refused push blocks the story as
 * `push-refused` with GitHub's words, and the work is kept in the run directory as a bundle.
 */
import { join } from "node:path";
import type { StoryOutcome } from "../pipeline/index.js";
import { git } from "../workspace/index.js";
import { pushStoryResult } from "./push.js";
import { markReadyForReview, type StoryPull } from "./story-start.js";
import { storyTip } from "./story-branch.js";
import type { AppOctokit } from "./token.js";
import type { StoryReporter, TrackingReporter } from "./tracking-reporter.js";

/** The file a refused push's work is kept in, inside the run directory. */
export const UNPUSHED_BUNDLE = "unpushed-work.bundle";

export interface DeliverArgs {
  repoDir: string;
  pull: StoryPull;
  outcome: StoryOutcome;
  octokit: AppOctokit;
  authEnv: () => Promise<Record<string, string>>;
  reporter: StoryReporter;
  tracker: TrackingReporter;
}

/** How the story ended once its delivery is known. */
export interface DeliveredEnd {
  status: StoryOutcome["status"];
  failureClass?: string;
}

/** Pushes the story's work (whatever the outcome), then reports its end truthfully. */
export async function deliverStoryWork(args: DeliverArgs): Promise<DeliveredEnd> {
  const { repoDir, pull, outcome, reporter, tracker } = args;
  const tip = outcome.commit ?? (await storyTip(repoDir, pull.branch));
  if (tip && tip !== pull.headSha) {
    const pushed = await pushStoryResult({ repoDir, branch: pull.branch, sha: tip, authEnv: args.authEnv });
    if (!pushed.pushed) {
      const kept = await keepUnpushedWork(repoDir, pull.branch, pull.headSha, outcome.runDir);
      const was = outcome.status === "completed" ? "completed" : `blocked (${outcome.failureClass ?? "unknown"})`;
      await tracker.block({
        failureClass: "push-refused",
        detail: `GitHub refused the push of ${tip.slice(0, 12)} to ${pull.branch}, so the pull request does not hold this work ` +
          `(the run had ${was}).\n\n${pushed.refusal}\n\n${kept ? `The work is kept in the run directory as ${UNPUSHED_BUNDLE}.` : "The work could not be saved as a bundle."}`,
      });
      return { status: "blocked", failureClass: "push-refused" };
    }
    await reporter.setHeadSha(tip);
  }
  await tracker.releaseEnd();
  if (outcome.status === "completed") {
    if (reporter.markReadyForReview) await reporter.markReadyForReview(pull.pullNodeId);
    else await markReadyForReview(args.octokit, pull.pullNodeId);
  }
  return { status: outcome.status, ...(outcome.failureClass ? { failureClass: outcome.failureClass } : {}) };
}

/** Saves the unpushed commits as a git bundle in the run directory; false when that failed. */
async function keepUnpushedWork(repoDir: string, branch: string, pushedHead: string, runDir: string): Promise<boolean> {
  try {
    await git(["bundle", "create", "--quiet", join(runDir, UNPUSHED_BUNDLE), `refs/heads/${branch}`, `^${pushedHead}`], { cwd: repoDir });
    return true;
  } catch {
    return false;
  }
}
