import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { schemas } from "../schema/index.js";
import { join } from "node:path";
import { pathComponent, storyDirName } from "../workspace/index.js";
import { JOURNAL_FILE } from "./journal.js";
import type { FailureClass } from "./events.js";

/**
 * Where one run of a story keeps its record:
 * `<harnessHome>/runs/<story>/<run-id>/` with `execution-history.ndjson`, `logs/`, and one
 * folder per attempt (`attempts/<n>/<stage>/` with the prompt, the agent's log and its
 * artifact directory). A failed attempt's folder is sealed with `archive.json` and kept.
 */
export interface RunLayout {
  runId: string;
  root: string;
  journal: string;
  logs: string;
  attemptDir(attempt: number): string;
  stageDir(attempt: number, stage: string): string;
}

/** A run id that sorts by time and does not collide: `20261129T190500Z-3fa2c1`. */
export function newRunId(now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

/** Where the record of a run lives, so that a reader can find it from a `run.started` event. */
export function runDirectory(harnessHome: string, storyId: string, runId: string): string {
  return join(harnessHome, "runs", storyDirName(storyId), runId);
}

/** Creates the run directory of a new run. */
export function createRunLayout(harnessHome: string, storyId: string, runId: string): RunLayout {
  const root = runDirectory(harnessHome, storyId, runId);
  const logs = join(root, "logs");
  mkdirSync(logs, { recursive: true });
  const attemptDir = (attempt: number): string => join(root, "attempts", String(attempt));
  return {
    runId,
    root,
    journal: join(root, JOURNAL_FILE),
    logs,
    attemptDir,
    stageDir: (attempt, stage) => join(attemptDir(attempt), pathComponent(stage)),
  };
}

/** The record folder of one task of a planned story: `tasks/<id>/` under the run, sharing its journal and logs. */
export function taskLayout(layout: RunLayout, taskId: string): RunLayout {
  const root = join(layout.root, "tasks", pathComponent(taskId));
  const attemptDir = (attempt: number): string => join(root, "attempts", String(attempt));
  return { ...layout, root, attemptDir, stageDir: (attempt, stage) => join(attemptDir(attempt), pathComponent(stage)) };
}

/** Seals a failed attempt's folder with why it failed; its artifacts stay where they are. */
export function archiveAttempt(layout: RunLayout, attempt: number, record: { stage: string; failureClass: FailureClass; reason: string; at: string }): string {
  const dir = layout.attemptDir(attempt);
  mkdirSync(dir, { recursive: true });
  const archive = schemas().validate("attempt-archive", { attempt, ...record }, join(dir, "archive.json"));
  writeFileSync(join(dir, "archive.json"), `${JSON.stringify(archive, null, 2)}\n`);
  return dir;
}
