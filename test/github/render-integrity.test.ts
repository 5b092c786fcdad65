/**
 * The `harness / integrity` check run and the status comment, rendered from a replayed journal:
 * every finding with its file and line, annotations within GitHub's 50 per request, output
 * within 65,535 bytes whatever the repository's paths, accepted findings named with who accepted them.
 */
import { describe, expect, it } from "@jest/globals";
import { planChecks } from "../../src/github/report/check-plan.js";
import { MAX_ANNOTATIONS, renderStatusComment } from "../../src/github/report/render/index.js";
import type { HistoryEvent } from "../../src/pipeline/events.js";
import { schemas } from "../../src/schema/index.js";
import { replay, stagePassed, stageStarted, worktree } from "./story-events.js";

const at = "2026-01-01T00:00:00.000Z";
const taskId = "task-1";
const started: HistoryEvent = {
  at,
  kind: "run.started",
  storyId: "octo/repo#7",
  runId: "run-1",
  taskId,
  title: "Drop the legacy suite",
  stages: ["implementer", "verifier", "integrity"],
  checks: [{ stage: "integrity", kind: "integrity" }],
  maxAttempts: 3,
  readmission: false,
};

type Integrity = Extract<HistoryEvent, { kind: "integrity.finished" }>;
const integrity = (fields: Partial<Integrity>): Integrity => ({
  at,
  kind: "integrity.finished",
  taskId,
  stage: "integrity",
  attempt: 1,
  base: "a".repeat(40),
  files: 3,
  findings: [],
  accepted: [],
  counts: { compared: true, base: { jest: 4 }, head: { jest: 3 } },
  unread: [],
  durationMs: 42,
  ...fields,
});

const integrityCheck = (events: HistoryEvent[]) => planChecks(replay(events)).find((check) => check.name === "harness / integrity");

describe("harness / integrity", () => {
  it("fails with every finding listed, annotated on its line, and the counts compared", () => {
    const finished = integrity({
      findings: [
        { file: "test/math.test.js", line: 8, kind: "skip-added", message: 'a test skipped or focused: `it.skip("adds"`' },
        { file: "test/gone.test.js", line: 1, kind: "test-file-deleted", message: "test file deleted (it held 2 test cases and 2 assertions)" },
        { file: "", line: 1, kind: "fewer-tests-run", message: "jest ran 4 tests on the base and 3 in the clean clone" },
      ],
    });
    const check = integrityCheck([started, worktree, stageStarted("integrity"), finished]);
    expect(check).toMatchObject({ status: "completed", conclusion: "failure", output: { title: "3 finding(s): the change weakens the suite" } });
    const summary = check?.output.summary ?? "";
    expect(summary).toContain("| test/math.test.js:8 | skip-added |");
    expect(summary).toContain("| test/gone.test.js:1 | test-file-deleted |");
    expect(summary).toContain("| the suite | fewer-tests-run | jest ran 4 tests on the base and 3 in the clean clone |");
    expect(summary).toContain("**Tests run:** jest 4 on the base, 3 in the clean clone.");
    expect(summary).toContain("/harness accept-integrity");
    // The deleted file has no line in the head commit, the suite-wide finding no file: one annotation.
    expect(check?.output.annotations).toEqual([
      {
        path: "test/math.test.js",
        start_line: 8,
        end_line: 8,
        annotation_level: "failure",
        title: "test integrity: skip-added",
        message: expect.stringContaining("a test skipped"),
      },
    ]);
  });

  it("keeps to 50 annotations and 65,535 bytes however many findings and however long their paths", () => {
    const findings = Array.from({ length: 500 }, (_, index) => ({
      file: `test/${"deep/".repeat(600)}f${index}.test.js`,
      line: index + 1,
      kind: "suppression-added" as const,
      message: `ü @team #1 ${"x".repeat(900)}`,
    }));
    const check = integrityCheck([started, worktree, integrity({ findings, omitted: 20 })]);
    expect(check?.output.annotations).toHaveLength(MAX_ANNOTATIONS);
    expect(Buffer.byteLength(check?.output.summary ?? "", "utf8")).toBeLessThanOrEqual(65_535);
    expect(check?.output.summary).not.toContain("@team");
    // What the outbox stores validates, annotations included.
    const write = {
      kind: "check",
      name: "harness / integrity",
      headSha: "b".repeat(40),
      externalId: "x",
      status: "completed",
      conclusion: "failure",
      output: check?.output,
    };
    const entry = { id: "1", story: { key: "o/r#7" }, write };
    expect(
      schemas()
        .issues("outbox-entry", entry)
        .filter((issue) => issue.path.includes("output")),
    ).toEqual([]);
  });

  it("passes with accepted findings named with who accepted them; says when counts were not compared", () => {
    const finished = integrity({
      accepted: [{ file: "tests/legacy/test_old.py", line: 1, kind: "test-file-deleted", message: "test file deleted", acceptedBy: "maintainer" }],
      counts: { compared: false, reason: "the base run printed no test count the gate can read" },
    });
    const events = [started, worktree, finished, stagePassed("integrity")];
    const check = integrityCheck(events);
    expect(check).toMatchObject({ status: "completed", conclusion: "success", output: { title: "Passed with 1 accepted finding(s)" } });
    expect(check?.output.summary).toContain("| tests/legacy/test\\_old.py:1 | test-file-deleted | test file deleted | maintainer |");
    expect(check?.output.summary).toContain("**Tests run:** not compared (the base run printed no test count the gate can read).");
    expect(renderStatusComment(replay(events))).toContain("- tests/legacy/test\\_old.py:1: test file deleted \\(test-file-deleted\\), accepted by maintainer");
  });

  it("is queued before the gate runs, skipped when the story ended without it", () => {
    expect(integrityCheck([started, worktree])).toMatchObject({ status: "queued" });
    const blocked: HistoryEvent = { at, kind: "story.blocked", taskId, failureClass: "agent-exit", detail: "d" };
    expect(integrityCheck([started, worktree, blocked])).toMatchObject({ status: "completed", conclusion: "skipped" });
  });
});

describe("the status comment", () => {
  it("names the findings, at most ten, pointing to the check run for the rest", () => {
    const findings = Array.from({ length: 12 }, (_, index) => ({
      file: `test/t${index}.test.js`,
      line: 3,
      kind: "skip-added" as const,
      message: "a test skipped",
    }));
    const body = renderStatusComment(replay([started, worktree, integrity({ findings })]));
    expect(body).toContain("### Test integrity");
    expect(body).toContain("12 finding(s) of the test-integrity gate:");
    expect(body).toContain("- test/t0.test.js:3: a test skipped \\(skip-added\\)");
    expect(body).not.toContain("test/t10.test.js");
    expect(body).toContain("- … and 2 more in `harness / integrity`");
  });
});
