/** The status comment's "Revisions" table, and the hidden record of the rounds from which the next round counts. */
import type { StorySnapshot } from "../../../pipeline/index.js";
import { boundComment } from "../../index.js";
import { untrustedCell } from "./text.js";
import type { RevisionRow } from "./types.js";

/** Opens the hidden record of the rounds (base64url JSON, so nothing in it can close the HTML comment). */
export const REVISIONS_MARKER = "<!-- story-harness:revisions ";

/** The outcome of a row still running, read off the run as it stands. */
function currentOutcome(snapshot: StorySnapshot): string {
  if (snapshot.outcome === "completed") return "verified";
  if (snapshot.outcome === "blocked") return `blocked (${snapshot.failureClass ?? "unknown"})`;
  return "running";
}

/** The rows with the running one's outcome filled in from `snapshot`. */
export function settledRevisions(rows: readonly RevisionRow[], snapshot: StorySnapshot): RevisionRow[] {
  return rows.map((row) => (row.outcome === undefined ? { ...row, outcome: currentOutcome(snapshot) } : row));
}

/** The Revisions section: the table, the note when a trigger started nothing, and the hidden record. */
export function revisionsSection(rows: readonly RevisionRow[], snapshot: StorySnapshot, note?: string): string[] {
  if (rows.length === 0 && note === undefined) return [];
  const settled = settledRevisions(rows, snapshot);
  const lines = ["", "### Revisions", ""];
  if (settled.length > 0) {
    lines.push("| Round | Trigger | Outcome |", "| --- | --- | --- |");
    for (const row of settled) lines.push(`| ${row.round} | ${untrustedCell(row.trigger)} | ${untrustedCell(row.outcome ?? "")} |`);
  }
  if (note !== undefined) lines.push("", note);
  // Outcomes recorded as they stand at this render: the next round reads them back from here.
  lines.push("", `${REVISIONS_MARKER}${Buffer.from(JSON.stringify(settled)).toString("base64url")} -->`);
  return lines;
}

/** The rounds recorded in a status comment's body (none when it has no record, or one that does not parse). */
export function parseRevisions(body: string): RevisionRow[] {
  const start = body.lastIndexOf(REVISIONS_MARKER);
  if (start < 0) return [];
  const end = body.indexOf(" -->", start);
  if (end < 0) return [];
  try {
    const rows = JSON.parse(Buffer.from(body.slice(start + REVISIONS_MARKER.length, end), "base64url").toString("utf8")) as unknown;
    if (!Array.isArray(rows)) return [];
    return rows.filter(
      (row): row is RevisionRow =>
        typeof row === "object" && row !== null && typeof (row as RevisionRow).round === "number" && typeof (row as RevisionRow).trigger === "string",
    );
  } catch {
    return [];
  }
}

/**
 * The status comment's body with a note under its Revisions table (a trigger that started
 * nothing), the rest of the comment unchanged: the run it reports is not running.
 */
export function renderStatusNote(body: string, rows: readonly RevisionRow[], note: string): string {
  const heading = body.indexOf("\n\n### Revisions\n");
  const before = heading >= 0 ? body.slice(0, heading) : body;
  const settled: StorySnapshot = {
    storyId: "",
    runId: "",
    title: "",
    maxAttempts: 0,
    attempt: 1,
    stages: [],
    checks: [],
    planned: false,
    tasks: [],
    outcome: "completed",
  };
  return boundComment([before, ...revisionsSection(rows, settled, note)].join("\n"));
}
