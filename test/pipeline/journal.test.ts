import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { consoleLine, emptySnapshot, Journal, readJournal, reduceSnapshot, type HistoryEvent } from "../../src/pipeline/index.js";
import { SchemaValidationError } from "../../src/schema/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

const at = "2026-11-29T10:00:00.000Z";
const events: HistoryEvent[] = [
  { kind: "run.started", at, storyId: "7", runId: "r1", taskId: "t1", title: "T", stages: ["implementer", "verifier"], maxAttempts: 2, readmission: false },
  { kind: "stage.started", at, taskId: "t1", stage: "implementer", attempt: 1 },
  { kind: "stage.finished", at, taskId: "t1", stage: "implementer", attempt: 1, outcome: "passed", durationMs: 5 },
  { kind: "story.blocked", at, taskId: "t1", failureClass: "retry-ceiling", detail: "d", branch: "b", commit: "c".repeat(40) },
];

describe("journal", () => {
  it("appends validated lines and reads them back", () => {
    const path = join(makeTempDir("harness-journal-"), "run", "execution-history.ndjson");
    const journal = new Journal(path);
    for (const event of events) journal.append(event);
    expect(readFileSync(path, "utf8").split("\n")).toHaveLength(events.length + 1);
    expect(readJournal(path)).toEqual(events);
  });

  it("refuses an event that does not match its kind's shape, and a line that is not JSON", () => {
    const path = join(makeTempDir("harness-journal-"), "execution-history.ndjson");
    const journal = new Journal(path);
    const bad = { kind: "stage.started", at, taskId: "t1", stage: "x", attempt: 0, extra: 1 } as unknown as HistoryEvent;
    expect(() => journal.append(bad)).toThrow(SchemaValidationError);
    expect(() => journal.append(bad)).toThrow(/\$\.attempt/);
    expect(() => journal.append({ ...bad, kind: "nope" } as unknown as HistoryEvent)).toThrow(/\$\.kind must be one of/);
    writeFileSync(path, `${JSON.stringify(events[0])}\nnot json\n`);
    expect(() => readJournal(path)).toThrow(`${path}:2`);
  });

  it("replays into the snapshot a renderer draws, and prints a line per step", () => {
    const snapshot = events.reduce(reduceSnapshot, emptySnapshot());
    expect(snapshot).toMatchObject({ outcome: "blocked", failureClass: "retry-ceiling", commit: "c".repeat(40), branch: "b" });
    expect(snapshot.stages[0]).toMatchObject({ id: "implementer", state: "passed", durationMs: 5 });
    expect(consoleLine(events[2] as HistoryEvent)).toMatch(/^implementer +attempt 1 +5ms +passed$/);
    expect(consoleLine(events[1] as HistoryEvent)).toBeUndefined();
  });
});
