import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { executionHistorySchemaText } from "../../src/pipeline/event-schemas.js";
import type { HistoryEvent, HistoryEventKind } from "../../src/pipeline/index.js";
import { schemas } from "../../src/schema/index.js";

const SCHEMA_FILE = fileURLToPath(new URL("../../schemas/execution-history.schema.json", import.meta.url));
const AT = "2026-01-02T03:04:05.000Z";
const SHA = "0123456789abcdef0123456789abcdef01234567";

/**
 * One valid event of every kind. The mapped type makes this list complete: a kind added to the
 * source without a sample here fails the typecheck.
 */
const SAMPLES: { [K in HistoryEventKind]: Extract<HistoryEvent, { kind: K }> } = {
  "run.started": {
    kind: "run.started",
    at: AT,
    storyId: "7",
    runId: "r1",
    title: "T",
    stages: ["implementer"],
    maxAttempts: 3,
    readmission: false,
    checks: [{ stage: "verifier", kind: "gate" }],
    unsandboxed: true,
  },
  "task.planned": { kind: "task.planned", at: AT, taskId: "a", title: "A", wave: 1, files: ["src/a.ts"], blockedBy: [], stages: ["implementer"] },
  "task.started": { kind: "task.started", at: AT, taskId: "a", wave: 1, attempt: 1 },
  "task.finished": { kind: "task.finished", at: AT, taskId: "a", outcome: "completed", attempt: 1, durationMs: 5, commit: SHA, kept: true },
  "wave.started": { kind: "wave.started", at: AT, wave: 1, tasks: ["a"], base: SHA },
  "wave.merged": { kind: "wave.merged", at: AT, wave: 1, merged: ["a"], commit: SHA },
  "worktree.created": { kind: "worktree.created", at: AT, taskId: "a", worktree: "w", branch: "b", base: SHA },
  "provision.succeeded": { kind: "provision.succeeded", at: AT, taskId: "a", cmd: null, durationMs: 0, skipped: true, phase: "worktree" },
  "provision.failed": { kind: "provision.failed", at: AT, taskId: "a", cmd: "npm ci", exitCode: null, logTail: "" },
  "seat.usage": {
    kind: "seat.usage",
    at: AT,
    taskId: "a",
    stage: "implementer",
    attempt: 1,
    turns: 2,
    inputTokens: 200,
    outputTokens: 40,
    durationMs: 5,
    badLines: 0,
    transcript: "attempts/1/implementer/transcript.jsonl",
  },
  "baseline.started": { kind: "baseline.started", at: AT, taskId: "a" },
  "baseline.finished": {
    kind: "baseline.finished",
    at: AT,
    taskId: "a",
    command: "npm test",
    commit: SHA,
    exitCode: 0,
    timedOut: false,
    outputTail: "",
    durationMs: 1,
    policy: { sandboxed: true, network: false },
  },
  "stage.started": { kind: "stage.started", at: AT, taskId: "a", stage: "implementer", attempt: 1 },
  "seat.rerun": {
    kind: "seat.rerun",
    at: AT,
    taskId: "a",
    stage: "verifier",
    attempt: 1,
    reason: "the verifier left no verdict.json in its artifact directory",
    logPath: "/runs/7/r1/attempts/1/verifier/agent-rerun-1.log",
  },
  "seat.unavailable": {
    kind: "seat.unavailable",
    at: AT,
    taskId: "a",
    stage: "implementer",
    attempt: 1,
    command: "claude",
    reason: "rate-limited",
    message: "limit",
    resetAt: AT,
  },
  "seat.parked": { kind: "seat.parked", at: AT, taskId: "a", stage: "implementer", attempt: 1, until: AT },
  "stage.finished": {
    kind: "stage.finished",
    at: AT,
    taskId: "a",
    stage: "verifier",
    attempt: 1,
    outcome: "failed",
    durationMs: 3,
    failureClass: "verdict-fail",
    detail: "no",
  },
  "gate.finished": {
    kind: "gate.finished",
    at: AT,
    taskId: "a",
    stage: "verifier",
    attempt: 1,
    command: "npm test",
    timedOut: false,
    outputTail: "ok",
    durationMs: 2,
    where: "clean-clone",
    worktree: { exitCode: 0, timedOut: false, outputTail: "ok", durationMs: 1 },
  },
  "verdict.recorded": { kind: "verdict.recorded", at: AT, taskId: "a", stage: "verifier", attempt: 1, verdict: "pass", findings: [], retryGuidance: "none" },
  "clean_clone.finished": {
    kind: "clean_clone.finished",
    at: AT,
    taskId: "a",
    stage: "verifier",
    attempt: 1,
    artifact: "clean-clone-result.json",
    result: { ran: false, command: "npm test", durationMs: 0, reason: "no commit" },
  },
  "fix.finished": {
    kind: "fix.finished",
    at: AT,
    taskId: "a",
    stage: "verifier",
    attempt: 1,
    round: 1,
    seat: "fixer",
    fixing: "suite-failed",
    outcome: "passed",
    durationMs: 4,
  },
  "integrity.finished": {
    kind: "integrity.finished",
    at: AT,
    taskId: "a",
    stage: "integrity",
    attempt: 1,
    base: "a".repeat(40),
    files: 2,
    findings: [{ file: "test/a.test.js", line: 1, kind: "test-file-deleted", message: "test file deleted" }],
    accepted: [{ file: "tests/legacy/b.py", line: 3, kind: "skip-added", message: "a test skipped", acceptedBy: "octocat" }],
    counts: { compared: true, base: { node: 3 }, head: { node: 2 } },
    unread: [],
    durationMs: 12,
  },
  "attempt.archived": { kind: "attempt.archived", at: AT, taskId: "a", attempt: 1, archiveDir: "attempts/1" },
  "retry.scheduled": {
    kind: "retry.scheduled",
    at: AT,
    taskId: "a",
    failedAttempt: 1,
    nextAttempt: 2,
    fromStage: "verifier",
    retryStage: "implementer",
    failureClass: "suite-failed",
    reason: "red",
  },
  "story.completed": { kind: "story.completed", at: AT, branch: "harness/story-7", commit: SHA },
  "story.blocked": { kind: "story.blocked", at: AT, failureClass: "blocked-by-dependency", detail: "waits", blockedTasks: ["b"] },
};

const issues = (value: unknown) => schemas().issues("execution-history", value);

describe("the journal's one source (src/pipeline/event-schemas.ts)", () => {
  it("is what schemas/execution-history.schema.json says, to the byte (run `npm run schemas:journal` when this fails)", () => {
    expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(executionHistorySchemaText());
  });

  it("defines exactly the kinds the type has, and the schema accepts a valid event of each", () => {
    const schema = JSON.parse(readFileSync(SCHEMA_FILE, "utf8")) as { properties: { kind: { enum: string[] } } };
    expect([...schema.properties.kind.enum].sort()).toEqual(Object.keys(SAMPLES).sort());
    for (const sample of Object.values(SAMPLES)) expect([sample.kind, issues(sample)]).toEqual([sample.kind, []]);
  });

  // Each value below is refused by the type (the @ts-expect-error lines fail the typecheck if the
  // type ever accepts it) and must be refused by the generated schema too.
  const refusedByTheType: [string, unknown][] = [
    // @ts-expect-error an unknown key
    ["an unknown key", { ...SAMPLES["stage.started"], extra: 1 } satisfies HistoryEvent],
    // @ts-expect-error a required field missing
    ["a missing field", { kind: "stage.started", at: AT, taskId: "a", stage: "s" } satisfies HistoryEvent],
    // @ts-expect-error an unknown kind
    ["an unknown kind", { kind: "stage.paused", at: AT, taskId: "a" } satisfies HistoryEvent],
    // @ts-expect-error a failure class outside the vocabulary
    ["an unknown failure class", { ...SAMPLES["story.blocked"], failureClass: "flaky" } satisfies HistoryEvent],
    // @ts-expect-error a string where a number belongs
    ["a string for a number", { ...SAMPLES["task.started"], attempt: "1" } satisfies HistoryEvent],
    // @ts-expect-error an outcome outside its enum
    ["an unknown outcome", { ...SAMPLES["task.finished"], outcome: "skipped" } satisfies HistoryEvent],
    // @ts-expect-error null for an optional field (absence, never null)
    ["null for an optional field", { ...SAMPLES["gate.finished"], exitCode: null } satisfies HistoryEvent],
    // @ts-expect-error a policy with an unknown key
    ["a nested unknown key", { ...SAMPLES["baseline.finished"], policy: { sandboxed: true, network: false, root: true } } satisfies HistoryEvent],
    // @ts-expect-error a clean-clone result missing its command
    ["a clean-clone result without its command", { ...SAMPLES["clean_clone.finished"], result: { ran: true, durationMs: 1 } } satisfies HistoryEvent],
    // @ts-expect-error the time missing
    ["no time", { kind: "wave.started", wave: 1, tasks: [], base: SHA } satisfies HistoryEvent],
  ];
  it.each(refusedByTheType)("refuses what the type refuses: %s", (_name, value) => {
    expect(issues(value)).not.toEqual([]);
  });
});
