/**
 * The `harness / integrity` check run and the status comment's integrity section: every finding
 * of the test-integrity gate with its file and line, what was accepted and by whom, and the
 * tests each runner reported on the base and in the clean clone (or why they were not compared).
 * File paths and messages come from the repository: rendered as untrusted text, bounded.
 */
import type { StorySnapshot, TaskSnapshot } from "../../../pipeline/index.js";
import { boundCheckRunOutput, redactSecrets } from "../../index.js";
import { formatDuration } from "./markdown.js";
import { singleLine, untrustedCell } from "./text.js";
import type { CheckAnnotation, CheckRunOutput, RenderOptions } from "./types.js";

type IntegrityEvent = NonNullable<TaskSnapshot["integrity"]>[string];
type IntegrityFinding = IntegrityEvent["findings"][number];

/** GitHub takes at most 50 annotations per request; the check run sends one request's worth, the summary lists every finding. */
export const MAX_ANNOTATIONS = 50;
/** Findings listed in the status comment; the check run has them all. */
export const STATUS_FINDINGS_MAX = 10;
/** Longest path and message shown, in characters (GitHub's annotation message takes 64 KiB; a line of a table far less). */
const PATH_MAX = 300;
const MESSAGE_MAX = 500;

/** The integrity result of a task's current attempt at `stage`, if the gate ran in it. */
export function currentIntegrity(task: TaskSnapshot | undefined, stage: string): IntegrityEvent | undefined {
  const event = task?.integrity?.[stage];
  return event && event.attempt === task?.attempt ? event : undefined;
}

/** The latest integrity result of any task of the snapshot (the story's only task, or the tasks of a plan). */
export function latestIntegrity(snapshot: StorySnapshot): IntegrityEvent[] {
  return snapshot.tasks.flatMap((task) => Object.values(task.integrity ?? {}));
}

const where = (finding: IntegrityFinding): string => (finding.file === "" ? "the suite" : `${singleLine(finding.file, PATH_MAX)}:${finding.line}`);

function findingRow(finding: IntegrityFinding & { acceptedBy?: string }, secrets: readonly string[]): string {
  const cells = [where(finding), finding.kind, redactSecrets(finding.message, secrets)];
  if (finding.acceptedBy !== undefined) cells.push(finding.acceptedBy);
  return `| ${cells.map((cell) => untrustedCell(cell, MESSAGE_MAX)).join(" | ")} |`;
}

function countsLine(event: IntegrityEvent): string {
  const counts = event.counts;
  if (!counts.compared) return `**Tests run:** not compared (${singleLine(counts.reason ?? "no counts", MESSAGE_MAX)}).`;
  const runners = Object.entries(counts.base ?? {}).map(
    ([runner, base]) => `${runner} ${base} on the base, ${counts.head?.[runner as keyof typeof counts.head] ?? 0} in the clean clone`,
  );
  return `**Tests run:** ${runners.join("; ")}.`;
}

/** The annotations of the findings on files (at most {@link MAX_ANNOTATIONS}): a failure on each line named. */
export function integrityAnnotations(event: IntegrityEvent, secrets: readonly string[] = []): CheckAnnotation[] {
  // A file that is gone has no line to annotate in the head commit.
  const gone = (finding: IntegrityFinding): boolean => finding.kind === "test-file-deleted" || finding.message.endsWith(" deleted");
  return event.findings
    .filter((finding) => finding.file !== "" && !gone(finding))
    .slice(0, MAX_ANNOTATIONS)
    .map((finding) => ({
      path: finding.file,
      start_line: finding.line,
      end_line: finding.line,
      annotation_level: "failure" as const,
      title: `test integrity: ${finding.kind}`,
      message: redactSecrets(finding.message, secrets).slice(0, MESSAGE_MAX),
    }));
}

/** The body of the integrity check run for one gate's result. */
function integrityBody(event: IntegrityEvent, secrets: readonly string[]): string {
  const lines = [
    `The change was compared with its base ${event.base.slice(0, 12)}: ${event.files} file(s), in ${formatDuration(event.durationMs)} (attempt ${event.attempt}).`,
    "",
    countsLine(event),
  ];
  if (event.findings.length > 0) {
    lines.push(
      "",
      "### Findings",
      "",
      "| Where | Rule | What changed |",
      "| --- | --- | --- |",
      ...event.findings.map((finding) => findingRow(finding, secrets)),
    );
    lines.push(
      "",
      "Restore what the findings name, or, if the story needs the change, a writer comments `/harness accept-integrity` on the pull request (or lists the files under `integrity.allow` in `.github/harness.yml`).",
    );
  }
  if (event.accepted.length > 0)
    lines.push(
      "",
      "### Accepted",
      "",
      "| Where | Rule | What changed | Accepted by |",
      "| --- | --- | --- | --- |",
      ...event.accepted.map((finding) => findingRow(finding, secrets)),
    );
  if (event.omitted !== undefined) lines.push("", `… and ${event.omitted} more finding(s) in the run's journal.`);
  if (event.unread.length > 0) lines.push("", `Not read (binary, too large or over the gate's budget): ${event.unread.length} file(s).`);
  return lines.join("\n");
}

/** The `harness / integrity` check run's output for `stage` of `task` (the story's only task when absent). */
export function renderIntegrityCheck(snapshot: StorySnapshot, task: TaskSnapshot | undefined, stage: string, options: RenderOptions = {}): CheckRunOutput {
  const secrets = options.secrets ?? [];
  const event = currentIntegrity(task, stage);
  if (!event) {
    const ended = (task?.outcome ?? snapshot.outcome) !== "running";
    return {
      title: ended ? "Did not run" : "Waiting for the change",
      summary: "The test-integrity gate compares the change with its base once the verifier passed.",
    };
  }
  const open = event.findings.length + (event.omitted ?? 0);
  const title =
    event.findings.length > 0
      ? `${open} finding(s): the change weakens the suite`
      : event.accepted.length > 0
        ? `Passed with ${event.accepted.length} accepted finding(s)`
        : "The suite still tests what it tested";
  const annotations = integrityAnnotations(event, secrets);
  return { title, summary: boundCheckRunOutput(integrityBody(event, secrets)), ...(annotations.length > 0 ? { annotations } : {}) };
}

/** The status comment's lines naming the integrity findings of the latest gates (nothing when there are none). */
export function integritySection(snapshot: StorySnapshot, secrets: readonly string[]): string[] {
  const events = latestIntegrity(snapshot).filter((event) => event.findings.length > 0 || event.accepted.length > 0);
  if (events.length === 0) return [];
  const findings = events.flatMap((event) => event.findings);
  const accepted = events.flatMap((event) => event.accepted);
  const lines = ["", "### Test integrity"];
  if (findings.length > 0) {
    lines.push("", `${findings.length} finding(s) of the test-integrity gate:`, "");
    lines.push(
      ...findings
        .slice(0, STATUS_FINDINGS_MAX)
        .map((finding) => `- ${untrustedCell(`${where(finding)}: ${redactSecrets(finding.message, secrets)} (${finding.kind})`, MESSAGE_MAX)}`),
    );
    if (findings.length > STATUS_FINDINGS_MAX) lines.push(`- … and ${findings.length - STATUS_FINDINGS_MAX} more in \`harness / integrity\``);
  }
  if (accepted.length > 0) {
    lines.push("", `${accepted.length} finding(s) accepted:`, "");
    lines.push(
      ...accepted
        .slice(0, STATUS_FINDINGS_MAX)
        .map(
          (finding) =>
            `- ${untrustedCell(`${where(finding)}: ${redactSecrets(finding.message, secrets)} (${finding.kind}), accepted by ${finding.acceptedBy}`, MESSAGE_MAX)}`,
        ),
    );
    if (accepted.length > STATUS_FINDINGS_MAX) lines.push(`- … and ${accepted.length - STATUS_FINDINGS_MAX} more in \`harness / integrity\``);
  }
  return lines;
}
