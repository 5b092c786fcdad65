/** Output of the `harness / provision` check run. */
import { taskSnapshot, type StorySnapshot } from "../../../pipeline/index.js";
import { boundCheckRunOutput } from "../../index.js";
import { redactSecrets } from "../../index.js";
import { formatDuration, inlineCode, tailBlock } from "./markdown.js";
import type { CheckRunOutput, RenderOptions } from "./types.js";

/** Renders the provisioning receipt or its failure (class, command, exit code, log tail). */
export function renderProvisionCheck(snapshot: StorySnapshot, options: RenderOptions = {}, taskId?: string): CheckRunOutput {
  const secrets = options.secrets ?? [];
  const task = taskSnapshot(snapshot, taskId);
  const provision = task?.provision;
  const command = provision?.cmd === null || provision?.cmd === undefined ? "_none (nothing to install)_" : inlineCode(redactSecrets(provision.cmd, secrets));
  if (!provision) {
    const outcome = task?.outcome ?? snapshot.outcome;
    const waiting = outcome === "running";
    return {
      title: waiting ? "Waiting for the worktree" : "Did not run",
      summary: waiting ? "Dependencies are installed once the story's worktree exists." : `Did not run: the story ended (${outcome}) before provisioning.`,
    };
  }
  if (provision.state === "passed") {
    const lines = [
      `**Command:** ${command}`,
      `**Duration:** ${formatDuration(provision.durationMs) || "–"}`,
      "",
      "Receipt `.harness-provisioned` written at the worktree root; every stage and gate entered a provisioned worktree.",
    ];
    return { title: provision.cmd === null ? "Provisioned (nothing to install)" : "Provisioned", summary: boundCheckRunOutput(lines.join("\n")) };
  }
  const exitCode = provision.exitCode === null || provision.exitCode === undefined ? "none (killed or did not start)" : String(provision.exitCode);
  const lines = [
    "**Failure class:** `workspace-provision-failed`",
    `**Command:** ${command}`,
    `**Exit code:** ${exitCode}`,
    "",
    "This is blocked infrastructure, not an agent failure: no agent entered the worktree.",
    "",
    "#### Log tail",
    tailBlock(provision.logTail, secrets),
  ];
  return { title: "Provisioning failed: workspace-provision-failed", summary: boundCheckRunOutput(lines.join("\n")) };
}
