/**
 * Output of a planner stage's check run (`harness / <stage>`): the planner seat's attempts, why
 * an attempt's plan was refused, and the plan it produced (task, wave, files, blocked by). The
 * plan's texts come from an agent: they are rendered as untrusted text, and the whole is bounded.
 */
import { taskSnapshot, type StorySnapshot, type TaskSnapshot } from "../../../pipeline/index.js";
import { boundCheckRunOutput } from "../../index.js";
import { redactSecrets } from "../../index.js";
import { adviceFor } from "./advice.js";
import { codeBlock, formatDuration, inlineCode, stageTable, tableCell } from "./markdown.js";
import { untrustedLine } from "./text.js";
import type { CheckRunOutput, RenderOptions } from "./types.js";

/** Rows of the plan table shown; a plan is small, and a check run must stay within its bound anyway. */
const MAX_PLAN_ROWS = 200;
/** Files shown per task in the plan table. */
const MAX_FILES_SHOWN = 10;

/** The planner stage's task (wave 0, named after the stage), once it was announced. */
export function plannerTask(snapshot: StorySnapshot, stage: string): TaskSnapshot | undefined {
  const task = taskSnapshot(snapshot, stage);
  return task && task.wave === 0 ? task : undefined;
}

/** The plan's tasks as a table, in plan order. */
function planTable(snapshot: StorySnapshot): string[] {
  const tasks = snapshot.tasks.filter((task) => task.wave > 0);
  if (tasks.length === 0) return [];
  const files = (task: TaskSnapshot): string => {
    const shown = task.files.slice(0, MAX_FILES_SHOWN).map((file) => inlineCode(singleFile(file)));
    return [...shown, ...(task.files.length > MAX_FILES_SHOWN ? [`and ${task.files.length - MAX_FILES_SHOWN} more`] : [])].join(", ") || "–";
  };
  const rows = tasks
    .slice(0, MAX_PLAN_ROWS)
    .map(
      (task) =>
        `| ${inlineCode(singleFile(task.id))} | ${tableCell(untrustedLine(task.title, 200))} | ${task.wave} | ${tableCell(files(task))} | ${task.blockedBy.map((id) => inlineCode(id)).join(", ") || "–"} |`,
    );
  const more = tasks.length > MAX_PLAN_ROWS ? [`_… and ${tasks.length - MAX_PLAN_ROWS} more tasks_`] : [];
  return ["### The plan", "", "| Task | Title | Wave | Files | Blocked by |", "| --- | --- | --- | --- | --- |", ...rows, ...more];
}

const singleFile = (text: string): string => text.replace(/[\r\n`|]+/g, " ").slice(0, 200);

/** Renders the planner stage `stage` of `snapshot`: waiting, planning, planned (with the plan), skipped or blocked. */
export function renderPlannerCheck(snapshot: StorySnapshot, stage: string, options: RenderOptions = {}): CheckRunOutput {
  const secrets = options.secrets ?? [];
  const task = plannerTask(snapshot, stage);
  if (!task) {
    if (snapshot.planned)
      return {
        title: "Skipped: the story brings its own plan",
        summary: boundCheckRunOutput(["The story's `harness-plan` block is the plan; the planner did not run.", "", ...planTable(snapshot)].join("\n")),
      };
    if (snapshot.outcome !== "running") return { title: "Did not run", summary: `Did not run: the story ended (${snapshot.outcome}) before planning.` };
    return { title: "Waiting", summary: `Stage ${inlineCode(stage)} plans the story once its worktree is provisioned.` };
  }
  const of = task.maxAttempts > 0 ? `/${task.maxAttempts}` : "";
  const planned = snapshot.tasks.filter((candidate) => candidate.wave > 0);
  const waves = new Set(planned.map((candidate) => candidate.wave)).size;
  const lines = [
    `**Stage:** ${inlineCode(stage)} · **Attempt:** ${task.attempt}${of}${task.durationMs !== undefined ? ` · **Duration:** ${formatDuration(task.durationMs)}` : ""}`,
    "",
    stageTable(task.stages),
  ];
  if (task.lastRetry) {
    lines.push(
      "",
      `### Attempt ${task.lastRetry.failedAttempt} was sent back (${inlineCode(task.lastRetry.failureClass)})`,
      "",
      codeBlock(redactSecrets(task.lastRetry.reason, secrets), "text"),
    );
  }
  if (task.state === "blocked") {
    const failureClass = task.failureClass ?? "internal-error";
    lines.push("", "### Blocked", "", `**Failure class:** \`${failureClass}\``);
    if (task.detail) lines.push("", codeBlock(redactSecrets(task.detail, secrets), "text"));
    lines.push("", `**What to do:** ${adviceFor(failureClass)}`);
  }
  if (task.state === "completed") lines.push("", ...planTable(snapshot));
  const title =
    task.state === "completed"
      ? `Planned ${planned.length} task${planned.length === 1 ? "" : "s"} in ${waves} wave${waves === 1 ? "" : "s"} (attempt ${task.attempt}${of})`
      : task.state === "blocked"
        ? `Blocked: ${task.failureClass ?? "internal-error"}`
        : task.state === "running"
          ? `Attempt ${task.attempt}${of} planning`
          : "Waiting for its worktree";
  return { title, summary: boundCheckRunOutput(lines.join("\n")) };
}
