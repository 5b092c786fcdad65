/**
 * Which check runs a snapshot should show, and in which state. Pure, so the reporter only
 * compares a plan with what it posted and the plan can be tested without GitHub. The check
 * runs come from the workflow's declared stages (`run.started.checks`), never from stage
 * names: a gate, review or planner stage gets `harness / <stage>`, a clean-clone stage
 * `harness / clean-clone`. A story with a plan gets one check run per task beside them.
 */
import { INTEGRATION_CLEAN_CLONE, INTEGRATION_TASK, taskSnapshot, type DeclaredCheck, type StorySnapshot, type TaskSnapshot } from "../../pipeline/index.js";
import { cleanCloneEventPassed, currentCleanClone, renderCleanCloneCheck } from "./render/index.js";
import { plannerTask, renderPlannerCheck } from "./render/index.js";
import { renderProvisionCheck } from "./render/index.js";
import { renderStoryCheck } from "./render/index.js";
import { renderTaskCheck } from "./render/index.js";
import { currentIntegrity, renderIntegrityCheck } from "./render/index.js";
import type { CheckRunOutput, RenderOptions } from "./render/index.js";
import { currentVerification, gateFailed, renderVerifierCheck, stagePassed } from "./render/index.js";

export const CHECK_NAMES = {
  provision: "harness / provision",
  cleanClone: "harness / clean-clone",
  integrity: "harness / integrity",
  story: "harness / story",
} as const;
/** A check run's name: one of {@link CHECK_NAMES}, `harness / <stage>` or `harness / task <id>: <title>`. */
export type CheckName = string;

/** Longest check-run name posted; GitHub refuses very long names and lists show about this much. */
const MAX_NAME_CHARS = 100;

/** The name of a declared stage check. */
export function stageCheckName(check: DeclaredCheck, all: readonly DeclaredCheck[]): CheckName {
  if (check.kind === "integrity")
    return all.filter((candidate) => candidate.kind === "integrity").length > 1 ? `${CHECK_NAMES.integrity} (${check.stage})` : CHECK_NAMES.integrity;
  if (check.kind !== "clean-clone") return `harness / ${check.stage}`;
  const several = all.filter((candidate) => candidate.kind === "clean-clone").length > 1;
  return several ? `harness / clean-clone (${check.stage})` : CHECK_NAMES.cleanClone;
}

/** The name of a plan task's check run. */
export function taskCheckName(task: Pick<TaskSnapshot, "id" | "title">): CheckName {
  const name = `harness / task ${task.id}: ${task.title.replace(/\s+/g, " ").trim()}`;
  return name.length <= MAX_NAME_CHARS ? name : `${name.slice(0, MAX_NAME_CHARS - 1)}…`;
}

/** True for the check runs that carry the Retry button of a blocked story or task. */
export function isRetryCheckName(name: string): boolean {
  return name === CHECK_NAMES.story || name.startsWith("harness / task ");
}

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

const ended = (task: TaskSnapshot | undefined, snapshot: StorySnapshot): boolean => (task?.outcome ?? snapshot.outcome) !== "running";
const stageRunning = (task: TaskSnapshot | undefined, stage: string): boolean =>
  task?.stages.some((candidate) => candidate.state === "running" && candidate.id === stage) ?? false;

function provisionPhase(task: TaskSnapshot | undefined, snapshot: StorySnapshot): Phase {
  if (task?.provision) return { status: "completed", conclusion: task.provision.state === "passed" ? "success" : "failure" };
  if (ended(task, snapshot)) return { status: "completed", conclusion: "skipped" };
  return { status: task && task.state !== "pending" ? "in_progress" : "queued" };
}

function gatePhase(task: TaskSnapshot | undefined, snapshot: StorySnapshot, stage: string): Phase {
  const { gate, verdict } = currentVerification(task, stage);
  const outcome = task?.outcome ?? snapshot.outcome;
  if (verdict) return { status: "completed", conclusion: verdict.verdict === "pass" ? "success" : "failure" };
  if (gate && gateFailed(gate)) return { status: "completed", conclusion: "failure" };
  if (gate && stagePassed(task, stage)) return { status: "completed", conclusion: "success" };
  if (outcome === "completed") return { status: "completed", conclusion: gate ? "success" : "skipped" };
  if (outcome === "blocked") return { status: "completed", conclusion: gate ? "cancelled" : "skipped" };
  if (gate || stageRunning(task, stage)) return { status: "in_progress" };
  return { status: "queued" };
}

function cleanClonePhase(task: TaskSnapshot | undefined, snapshot: StorySnapshot, stage: string): Phase {
  const event = currentCleanClone(task, stage);
  if (event) return { status: "completed", conclusion: cleanCloneEventPassed(event) ? "success" : "failure" };
  const gated = snapshot.checks.some((check) => (check.kind === "gate" || check.kind === "review") && check.stage === stage);
  const { verdict } = currentVerification(task, stage);
  // The check starts once the stage's own verification passed (or with the stage, when it has none).
  const started = verdict?.verdict === "pass" || (!gated && stageRunning(task, stage));
  if (ended(task, snapshot)) return { status: "completed", conclusion: started ? "cancelled" : "skipped" };
  return { status: started ? "in_progress" : "queued" };
}

function integrityPhase(task: TaskSnapshot | undefined, snapshot: StorySnapshot, stage: string): Phase {
  const event = currentIntegrity(task, stage);
  if (event) return { status: "completed", conclusion: event.findings.length > 0 ? "failure" : "success" };
  if (ended(task, snapshot)) return { status: "completed", conclusion: "skipped" };
  return { status: stageRunning(task, stage) ? "in_progress" : "queued" };
}

function storyPhase(snapshot: StorySnapshot): Phase {
  if (snapshot.outcome === "completed") return { status: "completed", conclusion: "success" };
  if (snapshot.outcome === "blocked") return { status: "completed", conclusion: "action_required" };
  return { status: "in_progress" };
}

function plannerPhase(snapshot: StorySnapshot, stage: string): Phase {
  const task = plannerTask(snapshot, stage);
  if (task?.state === "completed") return { status: "completed", conclusion: "success" };
  if (task?.state === "blocked") return { status: "completed", conclusion: "failure" };
  if (task?.state === "running") return { status: "in_progress" };
  // No planner task: the story brought its own plan, or ended before planning.
  if (!task && (snapshot.planned || snapshot.outcome !== "running")) return { status: "completed", conclusion: "skipped" };
  return { status: "queued" };
}

/** The check runs of the workflow's planner stages (one check run each, its attempts inside). */
function plannerChecks(snapshot: StorySnapshot, options: RenderOptions): PlannedCheck[] {
  return snapshot.checks
    .filter((check) => check.kind === "plan")
    .map((check) => ({
      name: stageCheckName(check, snapshot.checks),
      ...plannerPhase(snapshot, check.stage),
      output: renderPlannerCheck(snapshot, check.stage, options),
      attempt: 0,
    }));
}

function taskPhase(task: TaskSnapshot): Phase {
  if (task.state === "completed") return { status: "completed", conclusion: "success" };
  if (task.state === "blocked") return { status: "completed", conclusion: "action_required" };
  return { status: task.state === "running" ? "in_progress" : "queued" };
}

/** The check runs of one task's provisioning and declared stages. */
function stageChecks(snapshot: StorySnapshot, task: TaskSnapshot | undefined, options: RenderOptions): PlannedCheck[] {
  const attempt = task?.attempt ?? snapshot.attempt;
  const taskId = task?.id;
  const checks: PlannedCheck[] = [
    { name: CHECK_NAMES.provision, ...provisionPhase(task, snapshot), output: renderProvisionCheck(snapshot, options, taskId), attempt: 0 },
  ];
  for (const declared of snapshot.checks) {
    if (declared.kind === "plan") continue;
    const name = stageCheckName(declared, snapshot.checks);
    const target = { ...(taskId !== undefined ? { taskId } : {}), stage: declared.stage };
    if (declared.kind === "integrity") {
      checks.push({ name, ...integrityPhase(task, snapshot, declared.stage), output: renderIntegrityCheck(snapshot, task, declared.stage, options), attempt });
    } else if (declared.kind === "clean-clone") {
      checks.push({ name, ...cleanClonePhase(task, snapshot, declared.stage), output: renderCleanCloneCheck(snapshot, options, target), attempt });
    } else {
      checks.push({ name, ...gatePhase(task, snapshot, declared.stage), output: renderVerifierCheck(snapshot, options, target), attempt });
    }
  }
  return checks;
}

/**
 * The check runs as they should look for `snapshot`: the story's own first, then (without a
 * plan) its task's provisioning and declared stage checks, or (with a plan) one per task and
 * the declared checks of the story's integration on the merged branch.
 */
export function planChecks(snapshot: StorySnapshot, options: RenderOptions = {}): PlannedCheck[] {
  const story: PlannedCheck = { name: CHECK_NAMES.story, ...storyPhase(snapshot), output: renderStoryCheck(snapshot, options), attempt: 0 };
  if (snapshot.outcome === "blocked") story.actions = [{ ...RETRY_ACTION }];
  // The story's own check run first: under GitHub.com's pacing of an App's writes (one a
  // second), a maintainer sees the story in progress a few seconds sooner.
  const planners = plannerChecks(snapshot, options);
  if (!snapshot.planned) return [story, ...planners, ...stageChecks(snapshot, taskSnapshot(snapshot), options)];
  const tasks = snapshot.tasks.filter((task) => task.wave > 0);
  const perTask = tasks.map((task): PlannedCheck => {
    const planned: PlannedCheck = { name: taskCheckName(task), ...taskPhase(task), output: renderTaskCheck(snapshot, task, options), attempt: 0 };
    if (task.state === "blocked") planned.actions = [{ ...RETRY_ACTION }];
    return planned;
  });
  // The story-level clean-clone check runs on the merged branch, as stage `clean-clone` of the integration step.
  const integration = snapshot.tasks.find((task) => task.id === INTEGRATION_TASK);
  const target = { ...(integration ? { taskId: integration.id } : {}), stage: INTEGRATION_CLEAN_CLONE };
  const merged: PlannedCheck = {
    name: CHECK_NAMES.cleanClone,
    ...(integration
      ? cleanClonePhase(integration, snapshot, INTEGRATION_CLEAN_CLONE)
      : ended(undefined, snapshot)
        ? { status: "completed" as const, conclusion: "skipped" as const }
        : { status: "queued" as const }),
    output: integration
      ? renderCleanCloneCheck(snapshot, options, target)
      : renderCleanCloneCheck(snapshot, options, { taskId: "", stage: INTEGRATION_CLEAN_CLONE }),
    attempt: integration?.attempt ?? 1,
  };
  return [story, ...planners, ...perTask, merged];
}
