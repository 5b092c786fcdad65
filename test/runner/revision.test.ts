/** A revision round's pure decisions and texts: the budget of rounds, the same-failure stop, the prompt, the Revisions record. */
import { describe, expect, it } from "@jest/globals";
import { parseRevisions, renderStatusComment, renderStatusNote, type RevisionRow } from "../../src/github/report/render/index.js";
import { DEFAULT_HARNESS_CONFIG, parseHarnessConfig, type StorySnapshot } from "../../src/pipeline/index.js";
import type { RevisionRequest } from "../../src/queue/index.js";
import { decideRound, renderThreadReply, revisionPrompt, triggerLabel } from "../../src/runner/revision.js";

const review: RevisionRequest = {
  triggers: [
    {
      kind: "review",
      by: "writer",
      id: 7,
      body: "Please rename.",
      comments: [
        { id: 11, path: "greet.js", line: 2, body: "say hello" },
        { id: 12, path: "gone.js", body: "old" },
      ],
    },
  ],
};
const ci = (signature: string): RevisionRequest => ({
  triggers: [
    {
      kind: "ci",
      suiteId: 1,
      app: "github-actions",
      headSha: "a".repeat(40),
      checks: [{ name: "test", conclusion: "failure", summary: "1 failed", annotations: [], log: "Error: x", signature }],
    },
  ],
});

describe("decideRound", () => {
  it("lets rounds start until iterate.max_rounds is spent, reviews and CI counted together, and says so", () => {
    const config = parseHarnessConfig("iterate:\n  max_rounds: 2\n", ".github/harness.yml");
    const rows: RevisionRow[] = [{ round: 1, trigger: "review by @writer", outcome: "verified" }];
    expect(decideRound(config, rows, ci("s1"))).toBeUndefined();
    const spent = decideRound(config, [...rows, { round: 2, trigger: "CI", outcome: "verified", signatures: ["test:s0"] }], review);
    expect(spent).toMatchObject({ reason: "rounds-spent" });
    expect(spent?.note).toContain("`iterate.max_rounds` is spent (2 of 2 rounds)");
    expect(
      decideRound(
        DEFAULT_HARNESS_CONFIG,
        [
          { round: 1, trigger: "x" },
          { round: 2, trigger: "x" },
        ],
        review,
      ),
    ).toBeUndefined();
  });

  it("stops the loop when the same check fails with the same signature right after a fix round, and honours iterate.ci / iterate.reviews", () => {
    const rows: RevisionRow[] = [{ round: 1, trigger: "CI", outcome: "verified", signatures: ["test:s1"] }];
    expect(decideRound(DEFAULT_HARNESS_CONFIG, rows, ci("s1"))).toMatchObject({ reason: "same-failure" });
    expect(decideRound(DEFAULT_HARNESS_CONFIG, rows, ci("s2"))).toBeUndefined();
    expect(decideRound(parseHarnessConfig("iterate: { ci: false }\n", "x"), [], ci("s1"))).toMatchObject({ reason: "ci-off" });
    expect(decideRound(parseHarnessConfig("iterate: { reviews: false }\n", "x"), [], review)).toMatchObject({ reason: "reviews-off" });
    expect(() => parseHarnessConfig("iterate: { max_round: 2 }\n", "x")).toThrow(/max_round/);
  });
});

describe("the reviser's texts", () => {
  it("shows every review comment with its path and line (or that the line left the diff), and the CI log", () => {
    const prompt = revisionPrompt(review);
    expect(prompt.reviewFeedback).toContain("Comment 11 on `greet.js:2`");
    expect(prompt.reviewFeedback).toContain("Comment 12 on `gone.js (a line no longer in the diff)`");
    expect(prompt.ciFailure).toBeUndefined();
    expect(revisionPrompt(ci("s")).ciFailure).toContain("Error: x");
    expect(triggerLabel(review)).toBe("review by @writer");
  });

  it("replies on a thread with the agent's words as text, never as Markdown that mentions or links", () => {
    const body = renderThreadReply("renamed @everyone [x](http://evil)", { status: "completed", commit: "abc123" }, []);
    expect(body).toMatch(/^Addressed in abc123 \(verified\)\./);
    expect(body).toContain("```text\nrenamed @everyone [x](http://evil)\n```");
  });
});

describe("the Revisions record in the status comment", () => {
  const snapshot = (outcome: StorySnapshot["outcome"]): StorySnapshot => ({
    storyId: "1",
    runId: "r",
    title: "Greet",
    maxAttempts: 3,
    attempt: 1,
    stages: [],
    checks: [],
    planned: false,
    tasks: [],
    outcome,
  });

  it("renders the table with the running round's outcome and reads the rounds back, even with hostile trigger text", () => {
    const rows: RevisionRow[] = [
      { round: 1, trigger: "review by @a -->|x", outcome: "verified" },
      { round: 2, trigger: "CI: github-actions (test)", signatures: ["test:s"] },
    ];
    const body = renderStatusComment(snapshot("completed"), { revisions: rows });
    expect(body).toContain("### Revisions");
    expect(body).toContain("| 2 | CI: github-actions \\(test\\) | verified |");
    // A trigger's text cannot close the hidden record or break the table.
    expect(body).toContain("| 1 | review by @\u200ba --\\>\\|x | verified |");
    expect(parseRevisions(body)).toEqual([rows[0], { ...rows[1], outcome: "verified" }]);
    const noted = renderStatusNote(body, parseRevisions(body), "`iterate.max_rounds` is spent (2 of 2 rounds)");
    expect(noted).toContain("`iterate.max_rounds` is spent");
    expect(parseRevisions(noted)).toHaveLength(2);
    expect(parseRevisions("no record here")).toEqual([]);
  });
});
