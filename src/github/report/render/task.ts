/** Output of a plan task's check run (`harness / task <id>: <title>`), and the waves table of the story. */
import type { StorySnapshot, TaskSnapshot } from "../../../pipeline/index.js";
import { boundCheckRunOutput } from "../../index.js";
import { redactSecrets } from "../../index.js";
import { adviceFor, RETRY_COMMAND } from "./advice.js";
import { renderCleanCloneCheck } from "./clean-clone.js";
import { codeBlock, formatDuration, inlineCode, stageTable, tableCell } from "./markdown.js";
import { parkedLine, utcTime } from "./parked.js";
import { renderProvisionCheck } from "./provision.js";
import type { CheckRunOutput, RenderOptions } from "./types.js";
import { renderVerifierCheck } from "./verifier.js";
import { untrustedCell } from "./text.js";
import { usageTable } from "./usage.js";

const TASK_STATES: Record<TaskSnapshot["state"], string> = {
  pending: "⏸️ pending",
  running: "⏳ running",
  completed: "✅ completed",
  blocked: "⛔ blocked",
};

/** The waves table: one row per task (task, wave, state, attempt, duration), in plan order. */
export function wavesTable(snapshot: StorySnapshot): string {
  const rows = snapshot.tasks
    .filter((task) => task.wave > 0)
    .map((task) => {
      const state = task.kept ? "✅ kept (earlier run)" : TASK_STATES[task.state];
      const attempt = task.state === "pending" ? "–" : String(task.attempt);
      // The id matches the plan schema's pattern; the title is free text from an agent or the issue
      // author: text only, never a mention, link, image, heading or HTML.
      return `| ${tableCell(task.id)}: ${untrustedCell(task.title, 200)} | ${task.wave} | ${state} | ${attempt} | ${formatDuration(task.durationMs) || "–"} |`;
    });
  return ["| Task | Wave | State | Attempt | Duration |", "| --- | --- | --- | --- | --- |", ...rows].join("\n");
}

/** Renders one task: its state, files, stage table, provisioning, gates and clean-clone results, and why it is blocked. */
export function renderTaskCheck(snapshot: StorySnapshot, task: TaskSnapshot, options: RenderOptions = {}): CheckRunOutput {
  const secrets = options.secrets ?? [];
  const of = task.maxAttempts > 0 ? `/${task.maxAttempts}` : "";
  const lines = [
    `**Task:** ${inlineCode(task.id)} (wave ${task.wave}) ${TASK_STATES[task.state]}`,
    `**Files:** ${task.files.map((file) => inlineCode(file)).join(", ") || "–"}`,
    `**Blocked by:** ${task.blockedBy.map((id) => inlineCode(id)).join(", ") || "–"}`,
  ];
  if (task.kept) lines.push("", "Completed by an earlier run of this story; its work is on the story branch.");
  if (task.state === "running" && task.parked) lines.push("", parkedLine(task.parked));
  if (task.state !== "pending" && !task.kept) {
    lines.push("", stageTable(task.stages), ...usageTable(task));
    const sections: CheckRunOutput[] = [renderProvisionCheck(snapshot, options, task.id)];
    for (const check of snapshot.checks) {
      if (check.kind === "plan") continue;
      const target = { taskId: task.id, stage: check.stage };
      sections.push(check.kind === "clean-clone" ? renderCleanCloneCheck(snapshot, options, target) : renderVerifierCheck(snapshot, options, target));
    }
    for (const section of sections) lines.push("", `#### ${section.title}`, "", section.summary);
  }
  if (task.state === "blocked") {
    const failureClass = task.failureClass ?? "internal-error";
    lines.push("", "### Blocked", "", `**Failure class:** \`${failureClass}\``);
    if (task.detail) lines.push("", codeBlock(redactSecrets(task.detail, secrets), "text"));
    lines.push("", `**What to do:** ${adviceFor(failureClass)}`);
    lines.push(
      "",
      `To re-admit the blocked tasks in fresh worktrees, press **Retry** on this check run, or comment \`${RETRY_COMMAND}\` on the pull request (write access needed).`,
    );
  }
  const title =
    task.state === "completed"
      ? `Completed (attempt ${task.attempt}${of})`
      : task.state === "blocked"
        ? `Blocked: ${task.failureClass ?? "internal-error"}`
        : task.state === "running"
          ? task.parked
            ? `Attempt ${task.attempt}${of} parked until ${utcTime(task.parked.until)}`
            : `Attempt ${task.attempt}${of} running`
          : "Waiting for its wave";
  return { title, summary: boundCheckRunOutput(lines.join("\n")) };
}
