/**
 * Repository- and agent-controlled text in what the App posts, rendered by the pure renderers
 * with hostile inputs: a plan's task titles in the waves table (status comment and story check
 * run), and a clean-clone refusal naming a symlink whose name holds newlines, a heading, a
 * link, an image, HTML and mentions. Nothing of it may render as Markdown: no live mention or
 * team ping, no link or image, no heading, no HTML, no extra table cell or row.
 */
import { describe, expect, it } from "@jest/globals";
import { renderCleanCloneCheck, renderStatusComment, renderStoryCheck } from "../../src/github/report/index.js";
import type { CleanCloneRecord, HistoryEvent } from "../../src/pipeline/events.js";
import { replay, started } from "./story-events.js";

const at = "2026-01-01T00:00:00.000Z";
const HOSTILE =
  "x\n# Owned\n[click](https://evil.invalid/a) ![pixel](https://evil.invalid/p.png) <img src=x onerror=alert(1)> @alice @acme/admins https://evil.invalid www.evil.invalid | extra cell\n\n| forged | row |";

/** What a rendered Markdown text must not hold, each with why. */
function liveMarkdown(markdown: string): string[] {
  const found: string[] = [];
  // A mention is an @ directly followed by a login character (GitHub's rule), not inside a code span.
  const outsideCode = markdown.replace(/`[^`\n]*`/g, "");
  if (/(^|[^\w`])@[A-Za-z0-9]/.test(outsideCode)) found.push("a mention");
  if (/(?<!\\)\]\((?!\s)/.test(outsideCode) || /(?<!\\)!(?<!\\)\[/.test(outsideCode)) found.push("a link or an image");
  if (/(?<!\\)<[A-Za-z/]/.test(outsideCode.replace(/<!-- story-harness:status -->/, ""))) found.push("HTML");
  if (/https?:\/\/|\bwww\./.test(outsideCode)) found.push("an autolink");
  if (/^#+ (Owned|.*click)/m.test(markdown)) found.push("a forged heading");
  if (/^\| forged/m.test(markdown)) found.push("a forged table row");
  return found;
}

const cells = (row: string): number => row.replace(/\\\|/g, "").split("|").length - 2;

describe("hostile task titles in the waves table", () => {
  const events: HistoryEvent[] = [
    { ...started(), title: "A plan" } as HistoryEvent,
    { at, kind: "task.planned", taskId: "a", title: HOSTILE, wave: 1, files: ["src/a.ts"], blockedBy: [], stages: ["implementer"] },
    {
      at,
      kind: "task.planned",
      taskId: "b",
      title: "@acme/admins look ![x](https://evil.invalid/x.png)",
      wave: 2,
      files: [],
      blockedBy: ["a"],
      stages: ["implementer"],
    },
  ];

  it("renders each title as text in its one cell, in the status comment and the story check run", () => {
    const comment = renderStatusComment(replay(events));
    const story = renderStoryCheck(replay(events)).summary;
    for (const markdown of [comment, story]) {
      expect(liveMarkdown(markdown)).toEqual([]);
      const rows = markdown.split("\n").filter((line) => line.startsWith("| a:") || line.startsWith("| b:"));
      expect(rows).toHaveLength(2);
      // Five columns: task, wave, state, attempt, duration; the title's pipe cannot open a sixth.
      for (const row of rows) expect(cells(row)).toBe(5);
      // The words stay readable.
      expect(rows[0]).toContain("Owned");
      expect(rows[0]).toContain("alice");
    }
  });
});

describe("a hostile path in the clean-clone refusal", () => {
  const link = `docs/${HOSTILE}`;
  const reason = `the symlink ${link} points to "/etc/hosts", an absolute path outside the repository: it resolves on this machine only and dangles in any other checkout (allow it with --allow-external-symlinks or clean_clone.allow_external_symlinks)`;
  const result: CleanCloneRecord = {
    ran: false,
    command: "npm test",
    reason,
    warnings: [`the symlink ${link} points to "/etc/passwd"`],
    linked: [link],
  } as CleanCloneRecord;
  const finished: HistoryEvent = {
    at,
    kind: "clean_clone.finished",
    taskId: "task-1",
    stage: "verifier",
    attempt: 1,
    artifact: "clean-clone-result.json",
    result,
  };

  it("says why it did not run as one line of text: no heading, link, image, HTML or mention", () => {
    const output = renderCleanCloneCheck(replay([started(), finished]));
    expect(output.title).toBe("Attempt 1: did not run, 1 warning");
    expect(liveMarkdown(output.summary)).toEqual([]);
    const first = output.summary.split("\n")[0] ?? "";
    expect(first.startsWith("Did not run: the symlink docs/x # Owned")).toBe(false); // the heading mark is escaped
    expect(first).toContain("Owned");
    expect(first).toContain("allow it with --allow-external-symlinks");
    // The reason is one line: the next is the blank line before the command.
    expect(output.summary.split("\n").slice(1, 3)).toEqual(["", "**Command:** `npm test`"]);
  });
});
