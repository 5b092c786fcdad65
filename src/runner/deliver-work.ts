/**
 * Delivering a finished story: push its work, then let its end be reported. The push is
 * recorded in the outbox before it is tried, and every report after it waits until it went
 * through, so the check runs never say "success" about work the pull request does not hold.
 * The job tries the push a few times itself; if GitHub still cannot take it, the job ends and
 * the App's outbox carries the push and the reports behind it on, across restarts. A refused
 * push blocks the story as `push-refused` with GitHub's words, the work kept as a bundle.
 *
 * When the job is done: once its work is on GitHub (or its push waits in the durable outbox) and
 * every end report it owes (the check runs on the new head, the status comment, ready for review)
 * is recorded in the App's durable outbox, which delivers them in order after the job, across
 * restarts. The job does not wait for GitHub to take them, so its worker takes the next story
 * meanwhile. With an outbox in memory, nothing would deliver them after the job: it awaits them.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PUSH_SLOT, type Outbox, type OutboxStory } from "../outbox/index.js";
import { renderPushFailed, renderPushRefusedDetail } from "../github/report/index.js";
import type { FailureClass, StoryOutcome } from "../pipeline/index.js";
import { UNPUSHED_BUNDLE } from "./push.js";
import type { StoryPull } from "./story-start.js";
import { storyTip } from "./story-branch.js";
import type { TrackingReporter } from "./tracking-reporter.js";

/** How often the job itself tries the push (with the outbox's backoff) before it leaves it to the outbox. */
const IN_JOB_PUSH_ATTEMPTS = 3;

export interface DeliverArgs {
  repoDir: string;
  pull: StoryPull;
  outcome: StoryOutcome;
  outbox: Outbox;
  story: OutboxStory;
  repositoryId: number;
  /** True when the outbox is the App's (on disk, retrying on its own); false for one in memory. */
  durable: boolean;
  /** The story's one reporter, holding its end until the work is delivered. */
  reporter: TrackingReporter;
  signal?: AbortSignal;
}

/** How the story ended once its delivery is known. */
export interface DeliveredEnd {
  status: StoryOutcome["status"];
  failureClass?: FailureClass;
  /** The push waits in the outbox; the end is reported once it went through. */
  pushWaiting?: boolean;
  /** The end reports are recorded in the durable outbox, which delivers them after the job. */
  handedOff?: boolean;
}

/** Thrown when an outbox in memory could not push: nothing would try again, so the story says so. */
export class PushFailedError extends Error {
  readonly failureClass = "git-failed" satisfies FailureClass;
}

/** Pushes the story's work (whatever the outcome), then reports its end truthfully. */
export async function deliverStoryWork(args: DeliverArgs): Promise<DeliveredEnd> {
  const { repoDir, pull, outcome, reporter, outbox, story } = args;
  const tip = outcome.commit ?? (await storyTip(repoDir, pull.branch));
  // Everything the reporter writes from here on is the story's end: recorded durably, delivered after the job
  // (when the reporter's outbox is durable; one in memory keeps awaiting them).
  const handedOff = await reporter.handOff();
  let pushWaiting = false;
  if (tip && tip !== pull.headSha) {
    // Recorded before it is tried: an App that dies now pushes it when it starts again.
    await outbox.put(story, PUSH_SLOT, { kind: "push", repositoryId: args.repositoryId, repoDir, branch: pull.branch, sha: tip, runDir: outcome.runDir });
    const state = await outbox.deliverNow(story, PUSH_SLOT, IN_JOB_PUSH_ATTEMPTS, args.signal);
    if (state === "undeliverable") {
      const refusal = outbox.lastError(story, PUSH_SLOT) ?? "GitHub refused the push.";
      await outbox.discard(story, PUSH_SLOT);
      const kept = existsSync(join(outcome.runDir, UNPUSHED_BUNDLE));
      const was = outcome.status === "completed" ? "completed" : `blocked (${outcome.failureClass ?? "unknown"})`;
      await reporter.block({
        failureClass: "push-refused",
        detail: renderPushRefusedDetail({ branch: pull.branch, sha: tip, refusal, was, bundle: { kept, name: UNPUSHED_BUNDLE } }),
      });
      return { status: "blocked", failureClass: "push-refused" };
    }
    if (state === "pending" && !args.durable) {
      const why = outbox.lastError(story, PUSH_SLOT) ?? "the push did not go through";
      await outbox.discard(story, PUSH_SLOT);
      throw new PushFailedError(renderPushFailed(tip, pull.branch, IN_JOB_PUSH_ATTEMPTS, why));
    }
    pushWaiting = state === "pending";
    // The maintainer sees why the story's check run stays in progress: said on the head it shows now, ahead of the push.
    if (pushWaiting) await reporter.showPushWaiting({ branch: pull.branch, sha: tip, why: outbox.lastError(story, PUSH_SLOT) ?? "GitHub did not answer" });
    // Reports on the new head; while the push waits, the outbox holds them behind it.
    await reporter.setHeadSha(tip);
  }
  await reporter.releaseEnd();
  if (outcome.status === "completed") {
    await reporter.markReadyForReview(pull.pullNodeId);
  }
  return {
    status: outcome.status,
    ...(outcome.failureClass ? { failureClass: outcome.failureClass } : {}),
    ...(pushWaiting ? { pushWaiting } : {}),
    ...(handedOff ? { handedOff } : {}),
  };
}
