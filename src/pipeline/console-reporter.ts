import { succeeded } from "../exec/index.js";
import type { HistoryEvent, Reporter } from "./events.js";
import { gateWhere } from "./gate-where.js";

/** How a run of the suite ended, in a word or two. */
function suiteVerdict(run: { exitCode?: number; timedOut?: boolean }): string {
  if (succeeded(run)) return "passed";
  return run.timedOut ? "timed out" : `failed (exit ${run.exitCode ?? "none"})`;
}

/** Milliseconds as a short human duration (`850ms`, `12.4s`, `3m05s`). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
}

const pad = (text: string, width: number): string => text.padEnd(width);

/** One line for an event worth a line on a terminal; undefined for the rest. Pure. */
export function consoleLine(event: HistoryEvent): string | undefined {
  switch (event.kind) {
    case "run.started":
      return `story ${event.storyId} "${event.title}" — run ${event.runId}, stages ${event.stages.join(" → ")}, up to ${event.maxAttempts} attempt(s)${event.readmission ? " (re-admitted)" : ""}`;
    case "worktree.created":
      return `${pad("worktree", 12)} ${event.worktree} on ${event.branch}`;
    case "provision.succeeded":
      return `${pad("provision", 12)} ${pad(event.phase, 22)} ${pad(formatDuration(event.durationMs), 7)} ok (${event.cmd ?? "nothing to install"}${event.skipped ? ", receipt present" : ""})`;
    case "provision.failed":
      return `${pad("provision", 12)} failed: \`${event.cmd ?? "(none)"}\` exit ${event.exitCode ?? "none"}`;
    case "gate.finished":
      // A clean clone as the gate has its own line already; this one says what the gate made of it.
      if (event.where === "clean-clone") return `${pad(event.stage, 12)} attempt ${event.attempt}  gate: ${gateWhere(event)}`;
      return `${pad(event.stage, 12)} attempt ${event.attempt}  suite ${pad(formatDuration(event.durationMs), 7)} ${suiteVerdict(event)}`;
    case "baseline.finished":
      return `${pad("baseline", 12)} suite on base ${event.commit.slice(0, 12)} ${pad(formatDuration(event.durationMs), 7)} ${suiteVerdict(event)}${event.cached ? " (kept from an earlier run)" : ""}`;
    case "seat.unavailable":
      return `${pad(event.stage, 12)} attempt ${event.attempt}  agent unavailable (${event.reason}): ${event.message}${event.resetAt ? ` — resets ${event.resetAt}` : ""}`;
    case "seat.usage":
      return `${pad(event.stage, 12)} attempt ${event.attempt}  ${event.turns} turns, ${event.inputTokens} in / ${event.outputTokens} out tokens (${event.transcript})`;
    case "seat.parked":
      return `${pad(event.stage, 12)} attempt ${event.attempt}  parked until ${event.until}`;
    case "clean_clone.finished": {
      const result = event.result;
      const verdict = result.ran ? suiteVerdict(result) : `could not run: ${result.reason ?? ""}`;
      return `${pad(event.stage, 12)} attempt ${event.attempt}  clean clone ${formatDuration(result.durationMs)} ${verdict}`;
    }
    case "seat.rerun":
      return `${pad(event.stage, 12)} attempt ${event.attempt}  re-run: ${event.reason} (log: ${event.logPath})`;
    case "verdict.recorded": {
      const findings =
        event.findings.length > 0
          ? `: ${event.findings.slice(0, 3).join("; ")}${event.findings.length > 3 ? ` (and ${event.findings.length - 3} more)` : ""}`
          : "";
      return `${pad(event.stage, 12)} attempt ${event.attempt}  verdict ${event.verdict}${findings}`;
    }
    case "integrity.finished":
      return integrityLines(event);
    case "stage.finished":
      return `${pad(event.stage, 12)} attempt ${event.attempt}  ${pad(formatDuration(event.durationMs), 7)} ${event.outcome}${event.failureClass ? ` (${event.failureClass}: ${event.detail ?? ""})` : ""}`;
    case "retry.scheduled":
      return `${pad("retry", 12)} attempt ${event.nextAttempt} from ${event.retryStage} (${event.failureClass} at ${event.fromStage})`;
    case "story.completed":
      return `completed    commit ${event.commit} on ${event.branch}`;
    case "story.blocked":
      return `blocked      ${event.failureClass}: ${event.detail}${event.commit ? `\n             work so far: commit ${event.commit} on ${event.branch ?? "the story branch"}` : ""}`;
    default:
      return undefined;
  }
}

/** Findings printed per run of the integrity gate; the journal has them all. */
const MAX_CONSOLE_FINDINGS = 20;

/** The integrity gate's line, then one line per finding, open or accepted. */
function integrityLines(event: Extract<HistoryEvent, { kind: "integrity.finished" }>): string {
  const counts = event.counts.compared
    ? `tests run compared (${Object.entries(event.counts.base ?? {})
        .map(([runner, base]) => `${runner} ${base} → ${event.counts.head?.[runner as keyof typeof event.counts.head] ?? 0}`)
        .join(", ")})`
    : `tests run not compared: ${event.counts.reason ?? "no counts"}`;
  const head = `${pad(event.stage, 12)} attempt ${event.attempt}  ${event.files} file(s) changed, ${event.findings.length} finding(s), ${event.accepted.length} accepted; ${counts}`;
  const where = (finding: { file: string; line: number }): string => (finding.file === "" ? "the suite" : `${finding.file}:${finding.line}`);
  const lines = [
    ...event.findings.map((finding) => `${pad("", 12)} ✗ ${where(finding)} ${finding.message} (${finding.kind})`),
    ...event.accepted.map((finding) => `${pad("", 12)} ✓ accepted by ${finding.acceptedBy}: ${where(finding)} ${finding.message} (${finding.kind})`),
  ];
  const shown = lines.slice(0, MAX_CONSOLE_FINDINGS);
  if (lines.length > shown.length || event.omitted !== undefined) shown.push(`${pad("", 12)} … and more in the run directory's journal`);
  return [head, ...shown].join("\n");
}

/** A Reporter that prints one line per step through `write` (the CLI's stdout). */
export function consoleReporter(write: (text: string) => void): Reporter {
  return {
    onEvent: async (event) => {
      const line = consoleLine(event);
      if (line !== undefined) write(`${line}\n`);
    },
  };
}
