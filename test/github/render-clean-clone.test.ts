/**
 * The clean-clone check run shows what the result says about the clone itself: its warnings,
 * the folders linked from the target (or that it was provisioned afresh) and a shallow depth.
 */
import { describe, expect, it } from "@jest/globals";
import { CHECK_RUN_OUTPUT_MAX_BYTES, REDACTED, utf8Bytes } from "../../src/github/index.js";
import { neutralise, renderCleanCloneCheck } from "../../src/github/report/index.js";
import { openFenceAtEnd } from "../../src/text/index.js";
import type { CleanCloneRecord, HistoryEvent } from "../../src/pipeline/events.js";
import { replay, started } from "./story-events.js";

const BASE: CleanCloneRecord = { ran: true, command: "npm test", exitCode: 0, outputTail: "1 passing", durationMs: 1200, commit: "abc1234" };

function finished(result: Partial<CleanCloneRecord>): HistoryEvent {
  return {
    at: "2026-01-01T00:00:00.000Z",
    kind: "clean_clone.finished",
    taskId: "task-1",
    stage: "verifier",
    attempt: 1,
    artifact: "clean-clone-result.json",
    result: { ...BASE, ...result },
  };
}

const render = (result: Partial<CleanCloneRecord>, secrets: string[] = []) => renderCleanCloneCheck(replay([started(), finished(result)]), { secrets });

describe("clean-clone check run: the clone's history, linked folders and warnings", () => {
  it("shows a shallow depth, the linked folders and each warning, and counts the warnings in the title", () => {
    const output = render({
      depth: 1,
      linked: ["node_modules", ".venv"],
      warnings: [
        "the command runs .venv/bin/python, not the targeted interpreter /usr/bin/python3",
        'the symlink docs/x points to "/etc/hosts", an absolute path outside the repository (allowed)',
      ],
    });
    expect(output.title).toBe("Attempt 1: passed in a fresh clone, 2 warnings");
    expect(output.summary).toBe(
      [
        "**Command:** `npm test`",
        "**Interpreter:** `–`",
        "**Exit code:** 0",
        "**Commit:** `abc1234`",
        "**Duration:** 1.2 s",
        "**History:** the last 1 commit (shallow, `--depth 1`)",
        "**Linked from the target:** `node_modules`, `.venv`",
        "",
        "#### Warnings",
        "- the command runs .venv/bin/python, not the targeted interpreter /usr/bin/python3",
        '- the symlink docs/x points to "/etc/hosts", an absolute path outside the repository \\(allowed\\)',
        "",
        "#### Output tail",
        "```text",
        "1 passing",
        "```",
      ].join("\n"),
    );
  });

  it("says when nothing was linked, when the clone was provisioned afresh, and the plural of depth", () => {
    expect(render({ linked: [] }).summary).toContain("\n**Linked from the target:** none\n");
    const provisioned = render({ linked: [], provisioned: true, depth: 5 }).summary;
    expect(provisioned).toContain("\n**History:** the last 5 commits (shallow, `--depth 5`)\n**Dependencies:** provisioned afresh in the clone\n");
    expect(provisioned).not.toContain("Linked from the target");
    // A result from before these fields existed renders as it always did.
    const plain = render({}).summary;
    expect(plain).not.toMatch(/History|Linked|Dependencies|Warnings/);
  });

  it("shows the warnings and the linked folders of a check that did not run", () => {
    const output = render({
      ran: false,
      exitCode: undefined,
      outputTail: undefined,
      commit: undefined,
      reason: "the suite could not be started: ENOENT",
      linked: ["node_modules"],
      depth: 2,
      warnings: ["could not tell which interpreter the command invokes"],
    });
    expect(output).toEqual({
      title: "Attempt 1: did not run, 1 warning",
      summary: [
        "Did not run: the suite could not be started: ENOENT",
        "",
        "**Command:** `npm test`",
        "**History:** the last 2 commits (shallow, `--depth 2`)",
        "**Linked from the target:** `node_modules`",
        "",
        "#### Warnings",
        "- could not tell which interpreter the command invokes",
      ].join("\n"),
    });
  });

  it("renders a warning as text: one line, no mention, link, image, HTML or code fence, secrets redacted", () => {
    const token = `ghs_${"Q7".repeat(18)}`;
    const hostile = `link @octo-org/team ![x](http://evil.test/a.png) <img src=x> \`\`\`\nfence #12 ${token} s3cret`;
    const summary = render({ warnings: [hostile], linked: ["`node_modules`"] }, ["s3cret"]).summary;
    const line = summary.split("\n").find((candidate) => candidate.startsWith("- link")) ?? "";
    // Redacted first, then rendered as text: the marker shows as itself.
    expect(line).toContain(neutralise(REDACTED));
    expect(line).not.toContain(token);
    expect(line).not.toContain("s3cret");
    expect(line).not.toMatch(/(^|[^\\])[<!`[]/);
    expect(line).toContain("@\u200b");
    expect(line).toContain("#\u200b");
    expect(line).toContain(":\u200b//");
    expect(summary).toContain("**Linked from the target:** `` `node_modules` ``");
    expect(openFenceAtEnd(summary)).toBeUndefined();
  });

  it("stays within 65,535 bytes with thousands of huge multibyte warnings and linked folders, and still ends with the output tail", () => {
    const warnings = Array.from({ length: 5_000 }, (_, index) => `warning ${index} ${"错误😀".repeat(5_000)}`);
    const linked = Array.from({ length: 3_000 }, (_, index) => `deps${index}${"é".repeat(2_000)}`);
    const tail = `${"✗ failing line\n".repeat(10_000)}the last line of the suite`;
    const output = render({ exitCode: 1, warnings, linked, outputTail: tail });
    expect(utf8Bytes(output.summary)).toBeLessThanOrEqual(CHECK_RUN_OUTPUT_MAX_BYTES);
    expect(openFenceAtEnd(output.summary)).toBeUndefined();
    expect(output.summary.includes("\uFFFD")).toBe(false);
    expect(output.summary).toMatch(/\n… and 49\d\d more\n/);
    expect(output.summary).toMatch(/, … and 29\d\d more\n/);
    // The lists are bounded on their own, so the suite's last words are never cut for them.
    expect(output.summary.endsWith("the last line of the suite\n```")).toBe(true);
    expect(output.title).toBe("Attempt 1: failed in a fresh clone (exit 1), 5000 warnings");
  });
});
