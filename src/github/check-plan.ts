/**
 * Which state each of the four check runs should show for a snapshot. Pure, so the reporter
 * only compares a plan with what it posted and the plan can be tested without GitHub.
 */
import type { StorySnapshot } from "../pipeline/index.js";
import { cleanClonePassed, currentCleanClone, renderCleanCloneCheck } from "./render/clean-clone.js";
import { renderProvisionCheck } from "./render/provision.js";
import { renderStoryCheck } from "./render/story.js";
import type { CheckRunOutput, RenderOptions } from "./render/types.js";
import { currentVerification, gateFailed, renderVerifierCheck } from "./render/verifier.js";

export const CHECK_NAMES = {
  provision: "harness / provision",
  verifier: "harness / verifier",
  cleanClone: "harness / clean-clone",
  story: "harness / story",
} as const;
export type CheckName = (typeof CHECK_NAMES)[keyof typeof CHECK_NAMES];

export type CheckStatus = "queued" | "in_progress" | "completed";
export type CheckConclusion = "success" | "failure" | "action_required" | "skipped" | "cancelled";

/** The button on a blocked story's check run; its identifier comes back in `check_run.requested_action`. */
export const RETRY_ACTION = { label: "Retry", description: "Re-admit this story", identifier: "retry" } as const;

export interface PlannedCheck {
  name: CheckName;
  status: CheckStatus;
  conclusion?: CheckConclusion;
  output: CheckRunOutput;
  actions?: Array<{ label: string; description: string; identifier: string }>;
  /**
   * The attempt the check run belongs to (0: the whole story). A completed check run of an
   * earlier attempt is left as it is and a new one is created, so a failed attempt stays visible.
   */
  attempt: number;
}

type Phase = { status: CheckStatus; conclusion?: CheckConclusion };

const ended = (snapshot: StorySnapshot): boolean => snapshot.outcome !== "running";
const stageRunning = (snapshot: StorySnapshot, test: (id: string) => boolean): boolean =>
  snapshot.stages.some((stage) => stage.state === "running" && test(stage.id));

function provisionPhase(snapshot: StorySnapshot): Phase {
  if (snapshot.provision) return { status: "completed", conclusion: snapshot.provision.state === "passed" ? "success" : "failure" };
  if (ended(snapshot)) return { status: "completed", conclusion: "skipped" };
  return { status: snapshot.branch ? "in_progress" : "queued" };
}

function verifierPhase(snapshot: StorySnapshot): Phase {
  const { gate, verdict } = currentVerification(snapshot);
  if (verdict) return { status: "completed", conclusion: verdict.verdict === "pass" ? "success" : "failure" };
  if (gate && gateFailed(gate)) return { status: "completed", conclusion: "failure" };
  if (snapshot.outcome === "completed") return { status: "completed", conclusion: gate ? "success" : "skipped" };
  if (snapshot.outcome === "blocked") return { status: "completed", conclusion: gate ? "cancelled" : "skipped" };
  if (gate || stageRunning(snapshot, (id) => id === "verifier")) return { status: "in_progress" };
  return { status: "queued" };
}

function cleanClonePhase(snapshot: StorySnapshot): Phase {
  const event = currentCleanClone(snapshot);
  if (event) return { status: "completed", conclusion: cleanClonePassed(event) ? "success" : "failure" };
  const { verdict } = currentVerification(snapshot);
  const started = verdict?.verdict === "pass" || stageRunning(snapshot, (id) => id.replace(/[-_]/g, "") === "cleanclone");
  if (ended(snapshot)) return { status: "completed", conclusion: started ? "cancelled" : "skipped" };
  return { status: started ? "in_progress" : "queued" };
}

function storyPhase(snapshot: StorySnapshot): Phase {
  if (snapshot.outcome === "completed") return { status: "completed", conclusion: "success" };
  if (snapshot.outcome === "blocked") return { status: "completed", conclusion: "action_required" };
  return { status: "in_progress" };
}

/** The four check runs as they should look for `snapshot`. */
export function planChecks(snapshot: StorySnapshot, options: RenderOptions = {}): PlannedCheck[] {
  const story: PlannedCheck = { name: CHECK_NAMES.story, ...storyPhase(snapshot), output: renderStoryCheck(snapshot, options), attempt: 0 };
  if (snapshot.outcome === "blocked") story.actions = [{ ...RETRY_ACTION }];
  // The story's own check run first: under GitHub.com's pacing of an App's writes (one a
  // second), a maintainer sees the story in progress a few seconds sooner.
  return [
    story,
    { name: CHECK_NAMES.provision, ...provisionPhase(snapshot), output: renderProvisionCheck(snapshot, options), attempt: 0 },
    { name: CHECK_NAMES.verifier, ...verifierPhase(snapshot), output: renderVerifierCheck(snapshot, options), attempt: snapshot.attempt },
    { name: CHECK_NAMES.cleanClone, ...cleanClonePhase(snapshot), output: renderCleanCloneCheck(snapshot, options), attempt: snapshot.attempt },
  ];
}
