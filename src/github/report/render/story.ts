/** Output of the `harness / story` check run, and the story-level sentences the status comment shares. */
import { usageTable } from "./usage.js";
import { INTEGRATION_TASK, type StorySnapshot } from "../../../pipeline/index.js";
import { boundCheckRunOutput } from "../../index.js";
import { redactSecrets } from "../../index.js";
import { adviceFor, RETRY_COMMAND } from "./advice.js";
import { codeBlock, inlineCode, networkLine, stageTable } from "./markdown.js";
import { wavesTable } from "./task.js";
import { parkedLine, parkedSeat, utcTime } from "./parked.js";
import { untrustedLine } from "./text.js";
import type { CheckRunOutput, RenderOptions } from "./types.js";

/** One line saying where the story stands: which attempt runs, or how it ended. */
export function progressLine(snapshot: StorySnapshot): string {
  const of = snapshot.maxAttempts > 0 ? ` of ${snapshot.maxAttempts}` : "";
  if (snapshot.outcome === "completed") return `✅ Completed on attempt ${snapshot.attempt}${of}.`;
  if (snapshot.outcome === "blocked") return `⛔ Blocked on attempt ${snapshot.attempt}${of}: \`${snapshot.failureClass ?? "internal-error"}\`.`;
  const parked = parkedSeat(snapshot);
  if (parked) return `⏸️ Attempt ${snapshot.attempt}${of} is waiting. ${parkedLine(parked).slice(3)}`;
  const running = snapshot.stages.find((stage) => stage.state === "running");
  return `⏳ Attempt ${snapshot.attempt}${of} is running${running ? ` (stage ${inlineCode(running.id)})` : ""}.`;
}

/** Why the previous attempt was sent back, while the retry runs (or after it ended). */
export function retryLine(snapshot: StorySnapshot, secrets: readonly string[]): string | undefined {
  const retry = snapshot.lastRetry;
  if (!retry || retry.nextAttempt !== snapshot.attempt) return undefined;
  const reason = untrustedLine(redactSecrets(retry.reason, secrets), 2000);
  return `↩️ Attempt ${retry.failedAttempt} was sent back from ${inlineCode(retry.fromStage)} to ${inlineCode(retry.retryStage)} (\`${retry.failureClass}\`): ${reason}`;
}

/** The blocked story's failure class, detail, what to do and how to retry. */
export function blockedSection(snapshot: StorySnapshot, secrets: readonly string[], retryButton: boolean): string[] {
  if (snapshot.outcome !== "blocked") return [];
  const failureClass = snapshot.failureClass ?? "internal-error";
  const lines = ["", "### Blocked", "", `**Failure class:** \`${failureClass}\``];
  if (snapshot.detail) lines.push("", codeBlock(redactSecrets(snapshot.detail, secrets), "text"));
  lines.push("", `**What to do:** ${adviceFor(failureClass)}`);
  const how = retryButton ? "press **Retry** on this check run, or comment" : "comment";
  lines.push("", `To re-admit the story in a fresh worktree, ${how} \`${RETRY_COMMAND}\` on the pull request (write access needed).`);
  return lines;
}

/** The stage table of a story without a plan; the waves table and the story-level stages of one with a plan. */
export function progressTables(snapshot: StorySnapshot): string[] {
  if (!snapshot.planned) return ["", stageTable(snapshot.stages), ...usageTable(snapshot.tasks[0])];
  // Wave 0 holds the story's own steps: a planner's before the waves, the integration after them.
  const planner = snapshot.tasks.find((task) => task.wave === 0 && task.id !== INTEGRATION_TASK);
  const lines = [...(planner ? ["", "### Planning", "", stageTable(planner.stages)] : []), "", "### Waves", "", wavesTable(snapshot)];
  const integration = snapshot.tasks.find((task) => task.id === INTEGRATION_TASK);
  if (integration) lines.push("", "### On the merged branch", "", stageTable(integration.stages));
  if (snapshot.blockedTasks && snapshot.blockedTasks.length > 0)
    lines.push("", `**Blocked tasks:** ${snapshot.blockedTasks.map((id) => inlineCode(id)).join(", ")}`);
  return lines;
}

/** Renders the story's stage table, attempts and outcome; a blocked story names its class and what to do. */
export function renderStoryCheck(snapshot: StorySnapshot, options: RenderOptions = {}): CheckRunOutput {
  const secrets = options.secrets ?? [];
  const lines = [progressLine(snapshot)];
  if (snapshot.unsandboxed)
    lines.push(
      "",
      "⚠️ **Unsandboxed:** the operator runs this App with `HARNESS_SANDBOX=off`, so repository code ran as the App's own user, with its files and network in reach.",
    );
  const network = networkLine(snapshot.network);
  if (network.length > 0) lines.push("", ...network);
  const retry = retryLine(snapshot, secrets);
  if (retry) lines.push("", retry);
  lines.push(...progressTables(snapshot));
  if (snapshot.outcome === "completed" && snapshot.commit) lines.push("", `Final commit: ${inlineCode(snapshot.commit)}`);
  lines.push(...blockedSection(snapshot, secrets, true));
  const of = snapshot.maxAttempts > 0 ? `/${snapshot.maxAttempts}` : "";
  const title =
    snapshot.outcome === "completed"
      ? `Completed (attempt ${snapshot.attempt}${of})`
      : snapshot.outcome === "blocked"
        ? `Blocked: ${snapshot.failureClass ?? "internal-error"}`
        : parkedSeat(snapshot)
          ? `Attempt ${snapshot.attempt}${of} parked until ${utcTime(parkedSeat(snapshot)?.until ?? "")}`
          : `Attempt ${snapshot.attempt}${of} running`;
  const marked = snapshot.unsandboxed ? `${title} (unsandboxed)` : snapshot.network === "host" ? `${title} (host network)` : title;
  return { title: marked, summary: boundCheckRunOutput(lines.join("\n")) };
}
