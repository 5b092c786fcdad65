/** Output of a gate stage's check run (`harness / <stage>`): the suite gate and the seat's verdict. */
import { gateWhere, taskSnapshot, type StorySnapshot, type TaskSnapshot } from "../../../pipeline/index.js";
import { succeeded } from "../../../exec/index.js";
import { boundCheckRunOutput } from "../../index.js";
import { redactSecrets } from "../../index.js";
import { formatDuration, inlineCode, policyLine, tailBlock } from "./markdown.js";
import { neutralise, untrustedLine } from "./text.js";
import type { CheckRunOutput, RenderOptions } from "./types.js";

type Gate = NonNullable<TaskSnapshot["gates"][string]>;
type Verdict = NonNullable<TaskSnapshot["verdicts"][string]>;

/** Which task and stage a per-stage check run shows; by default the story's first task and its first declared gate. */
export interface CheckTarget {
  taskId?: string;
  stage?: string;
}

/** The stage a gate check run shows: the named one, else the first gate or review the workflow declares. */
export function gateStage(snapshot: StorySnapshot, target: CheckTarget = {}): string | undefined {
  return target.stage ?? snapshot.checks.find((check) => check.kind === "gate" || check.kind === "review")?.stage;
}

/** The suite gate and verdict of a task's current attempt at `stage` (earlier attempts have their own check runs). */
export function currentVerification(task: TaskSnapshot | undefined, stage: string | undefined): { gate?: Gate; verdict?: Verdict } {
  if (!task || stage === undefined) return {};
  const gate = task.gates[stage];
  const verdict = task.verdicts[stage];
  return {
    gate: gate?.attempt === task.attempt ? gate : undefined,
    verdict: verdict?.attempt === task.attempt ? verdict : undefined,
  };
}

/** True when `stage` of the task's current attempt passed (a gate stage without a seat passes with its suite). */
export function stagePassed(task: TaskSnapshot | undefined, stage: string | undefined): boolean {
  return task?.stages.some((candidate) => candidate.id === stage && candidate.state === "passed" && candidate.attempt === task.attempt) ?? false;
}

/** True when a gate run did not pass. */
export function gateFailed(gate: Gate): boolean {
  return !succeeded(gate);
}

/** Renders the suite command, exit code, output tail, verdict and findings of the current attempt. */
export function renderVerifierCheck(snapshot: StorySnapshot, options: RenderOptions = {}, target: CheckTarget = {}): CheckRunOutput {
  const task = taskSnapshot(snapshot, target.taskId);
  return renderGateSection(task, gateStage(snapshot, target), snapshot.outcome, options);
}

/** The gate stage's part of a check run, for one task. */
export function renderGateSection(
  task: TaskSnapshot | undefined,
  stage: string | undefined,
  storyOutcome: StorySnapshot["outcome"],
  options: RenderOptions = {},
): CheckRunOutput {
  const secrets = options.secrets ?? [];
  const { gate, verdict } = currentVerification(task, stage);
  const attempt = `Attempt ${task?.attempt ?? 1}`;
  if (!gate && !verdict) {
    const running = (task?.outcome ?? storyOutcome) === "running";
    const which = stage !== undefined ? inlineCode(stage) : "the gate stage";
    return {
      title: running ? `${attempt}: waiting` : `${attempt}: did not run`,
      summary: running
        ? `The suite gate and the ${which} stage run after the stages before it.`
        : `Did not run: the story ended (${task?.outcome ?? storyOutcome}) before verification.`,
    };
  }
  const lines: string[] = [];
  if (gate) {
    const exit = gate.timedOut ? "timed out" : gate.exitCode === undefined ? "none" : String(gate.exitCode);
    lines.push(
      `**Suite:** ${inlineCode(redactSecrets(gate.command, secrets))}`,
      `**Exit code:** ${exit}`,
      `**Duration:** ${formatDuration(gate.durationMs)}`,
      ...policyLine(gate.policy),
      ...(gate.where !== undefined ? [`**Where:** ${gateWhere(gate)}`] : []),
      "",
    );
  }
  if (verdict) {
    lines.push(`**Verdict:** ${verdict.verdict === "pass" ? "✅ pass" : "❌ fail"}`);
    if (verdict.findings.length > 0)
      lines.push("", "#### Findings", ...verdict.findings.map((finding) => `- ${untrustedLine(redactSecrets(finding, secrets), 4000)}`));
    if (verdict.retryGuidance) lines.push("", "#### Guidance for the next attempt", neutralise(redactSecrets(verdict.retryGuidance, secrets)));
    lines.push("");
  } else if (gate && !gateFailed(gate) && !stagePassed(task, stage)) {
    lines.push(`**Verdict:** waiting for the ${stage ?? "seat"}`, "");
  }
  lines.push(...sideBySide(task, gate, verdict));
  if (gate) lines.push(gate.where === "clean-clone" ? "#### Suite output tail (clean clone)" : "#### Suite output tail", tailBlock(gate.outputTail, secrets));
  if (gate?.worktree) lines.push("#### Suite output tail (re-run in the worktree)", tailBlock(gate.worktree.outputTail, secrets));
  const title = verdict
    ? `${attempt}: verdict ${verdict.verdict}`
    : gate && gateFailed(gate)
      ? `${attempt}: suite failed${gate.where === "clean-clone" ? " in the clean clone" : ""} (${gate.timedOut ? "timed out" : `exit ${gate.exitCode ?? "none"}`})${rerunWords(gate)}`
      : stagePassed(task, stage)
        ? `${attempt}: suite passed`
        : `${attempt}: suite passed, ${stage ?? "seat"} running`;
  return { title, summary: boundCheckRunOutput(lines.join("\n")) };
}

/** What the in-tree re-run after a failed clean clone gave, for a title. */
function rerunWords(gate: Gate): string {
  if (!gate.worktree) return "";
  return succeeded(gate.worktree) ? "; passes in the worktree" : "; fails in the worktree too";
}

function suiteResult(run: { exitCode?: number; timedOut: boolean } | undefined): string {
  if (!run) return "not run yet";
  if (run.timedOut) return "⏱ timed out";
  return succeeded(run) ? "✅ passed (exit 0)" : `❌ failed (exit ${run.exitCode ?? "none"})`;
}

/**
 * What the verifier claimed, what the suite gave on the base commit and what it gave on the
 * change, side by side: a reader sees at once whether a red suite is the change's doing.
 */
function sideBySide(task: TaskSnapshot | undefined, gate: Gate | undefined, verdict: Verdict | undefined): string[] {
  const baseline = task?.baseline;
  if (!task || !baseline) return [];
  const claim = verdict ? (verdict.verdict === "pass" ? "✅ pass" : "❌ fail") : "no verdict yet";
  return [
    "#### Claimed, base and change",
    "| | Result |",
    "|---|---|",
    `| Verifier's verdict (claimed) | ${claim} |`,
    `| Suite on the base commit \`${baseline.commit.slice(0, 12)}\` | ${suiteResult(baseline)} |`,
    `| Suite on the change (attempt ${task.attempt}) | ${suiteResult(gate)} |`,
    "",
  ];
}
