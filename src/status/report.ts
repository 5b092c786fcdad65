/**
 * What the App is doing, as an operator asks it (`GET /harness`, `harness status`): the queue,
 * each story's latest run with its current stage and attempt, recent outcomes, quarantined
 * job files, the live tail of a running step's log and the running seat's latest tool calls. Collected from the queue's own view
 * and the run directories under `HARNESS_HOME/runs`; read-only.
 */
import { readdirSync, statSync } from "node:fs";
import { readBoundedFileSync } from "../files/index.js";
import { join } from "node:path";
import { redactSecrets } from "../github/index.js";
import { type DoorStatus } from "../github/door/index.js";
import { emptySnapshot, JOURNAL_FILE, readJournal, reduceSnapshot } from "../pipeline/index.js";
import { redactAgentText } from "../agents/index.js";
import { stripAnsi } from "../text/index.js";
import type { QueuedJobView, StoryQueue } from "../queue/index.js";
import type { ReportedRun } from "./model/index.js";
import { collectStatusAndReports, type HarnessStatus } from "./collect.js";
import { latestToolCalls, type ToolCall } from "./tool-calls.js";

/** Runs shown, newest first. */
export const RECENT_RUNS = 25;
/** Bytes of a running step's log shown. */
export const LIVE_TAIL_BYTES = 4096;
/** Bytes of a running seat's events read for its latest tool calls (a few events; one may be large). */
export const LIVE_EVENTS_BYTES = 256 * 1024;
/** What a seat's events are kept as once it ends. */
const TRANSCRIPT_FILE = "transcript.jsonl";

/** A story's latest run; on Redis, `worker` names the worker whose journal it is. */
export interface RunStatus extends ReportedRun {
  worker?: string;
}

/** The data directory's state (`harness status`: the App, queued, running, quarantined, undelivered) and the runs. */
export interface StatusReport extends HarnessStatus {
  generatedAt: string;
  /** The queue's own view of its jobs (the Redis adapter's too), with their stories. */
  jobs: QueuedJobView[];
  runs: RunStatus[];
  /** The App's webhook door: what it shed and the redelivery sweeps (absent without a webhook secret). */
  door?: DoorStatus;
}

/**
 * Collects the report from the queue's jobs and the run directories under `home`; on Redis,
 * from every worker's report too (their runs are on their own disks), newest first.
 */
export async function collectStatus(args: {
  home: string;
  jobs: readonly QueuedJobView[];
  queue?: StoryQueue;
  secrets?: readonly string[];
  now?: Date;
  door?: DoorStatus;
}): Promise<StatusReport> {
  const { status, reports, reportedHere } = await collectStatusAndReports(args.home, args.queue);
  const runs: RunStatus[] = [
    ...(reportedHere ? [] : collectRuns(args.home, args.secrets ?? [])),
    ...reports.flatMap((report) => (report.runs ?? []).map((run) => ({ ...run, worker: report.worker }))),
  ];
  runs.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  return {
    ...status,
    generatedAt: (args.now ?? new Date()).toISOString(),
    jobs: [...args.jobs],
    runs: runs.slice(0, RECENT_RUNS),
    ...(args.door ? { door: args.door } : {}),
  };
}

/** The newest {@link RECENT_RUNS} story runs under `<home>/runs`, newest first (what a worker publishes). */
export function collectRuns(home: string, secrets: readonly string[]): ReportedRun[] {
  const runs = latestRuns(join(home, "runs"))
    .map((dir) => runStatus(dir, secrets))
    .filter((run): run is ReportedRun => run !== undefined);
  runs.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  return runs.slice(0, RECENT_RUNS);
}

/** The newest run directory of every story. */
function latestRuns(runsDir: string): { story: string; dir: string }[] {
  const found: { story: string; dir: string }[] = [];
  for (const story of entries(runsDir)) {
    const runIds = entries(join(runsDir, story)).sort();
    const newest = runIds.at(-1);
    if (newest) found.push({ story, dir: join(runsDir, story, newest) });
  }
  return found;
}

function runStatus(run: { story: string; dir: string }, secrets: readonly string[]): ReportedRun | undefined {
  let events;
  try {
    events = readJournal(join(run.dir, JOURNAL_FILE));
  } catch {
    return undefined; // not started yet, or not a run directory
  }
  const first = events[0];
  const last = events.at(-1);
  if (!first || !last) return undefined;
  const snapshot = events.reduce(reduceSnapshot, emptySnapshot());
  const stage =
    snapshot.stages.find((candidate) => candidate.state === "running") ?? [...snapshot.stages].reverse().find((candidate) => candidate.state !== "pending");
  const status: ReportedRun = {
    story: run.story,
    runId: snapshot.runId,
    title: snapshot.title,
    outcome: snapshot.outcome,
    attempt: snapshot.attempt,
    maxAttempts: snapshot.maxAttempts,
    ...(stage ? { stage: stage.id } : {}),
    ...(snapshot.failureClass ? { failureClass: snapshot.failureClass } : {}),
    ...(snapshot.detail ? { detail: redactSecrets(snapshot.detail, secrets) } : {}),
    startedAt: first.at,
    updatedAt: last.at,
    tasks: snapshot.planned
      ? snapshot.tasks.map((task) => ({ id: task.id, title: task.title, wave: task.wave, state: task.state, attempt: task.attempt }))
      : [],
  };
  if (snapshot.outcome === "running") {
    const newest = newestFiles(run.dir);
    const tail = newestLogTail(run.dir, newest?.log, secrets);
    if (tail) status.liveTail = tail;
    const tools = newestToolCalls(run.dir, newest?.events, secrets);
    if (tools) status.liveTools = tools;
  }
  return status;
}

/** How many entries and levels of a run folder the live tail's search looks at. */
const MAX_WALK_ENTRIES = 20_000;
const MAX_WALK_DEPTH = 8;

/** The newest file under `dir` of each kind: any `.log`, and a seat's events (`agent.log` while it runs, `transcript.jsonl` after). */
function newestFiles(dir: string): { log?: string; events?: string } | undefined {
  const newest: { log?: { path: string; mtime: number }; events?: { path: string; mtime: number } } = {};
  const offer = (kind: "log" | "events", path: string, mtime: number): void => {
    const current = newest[kind];
    if (!current || mtime > current.mtime) newest[kind] = { path, mtime };
  };
  // The run folder holds the agents' artifact folders: the walk follows no link (Dirent types are lstat's), goes only
  // so deep and looks at only so many entries, so a planted tree cannot stall the status page.
  let budget = MAX_WALK_ENTRIES;
  const walk = (folder: string, depth: number): void => {
    if (depth > MAX_WALK_DEPTH) return;
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (--budget < 0) return;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path, depth + 1);
      else if (entry.isFile() && (entry.name.endsWith(".log") || entry.name === TRANSCRIPT_FILE)) {
        const mtime = statSync(path).mtimeMs;
        if (entry.name.endsWith(".log")) offer("log", path, mtime);
        // A preset CLI's events land in the seat's agent.log as they arrive; the log is split into transcript.jsonl when the seat ends.
        if (entry.name === "agent.log" || entry.name === TRANSCRIPT_FILE) offer("events", path, mtime);
      }
    }
  };
  try {
    walk(dir, 0);
  } catch {
    return undefined;
  }
  return { ...(newest.log ? { log: newest.log.path } : {}), ...(newest.events ? { events: newest.events.path } : {}) };
}

/** The latest tool calls of the newest seat's events under the run folder `dir`, redacted. */
function newestToolCalls(dir: string, events: string | undefined, secrets: readonly string[]): { file: string; calls: ToolCall[] } | undefined {
  if (events === undefined) return undefined;
  let bytes: Buffer;
  try {
    bytes = readBoundedFileSync(events, { maxBytes: LIVE_EVENTS_BYTES, tail: true });
  } catch {
    return undefined;
  }
  // The App's secrets and token shapes (redactSecrets), and an agent's credentials (redactAgentText: provider keys).
  const calls = latestToolCalls(bytes.toString("utf8"), (text) => redactAgentText(redactSecrets(text, secrets), secrets));
  return calls.length === 0 ? undefined : { file: events.slice(dir.length + 1), calls };
}

/** The last {@link LIVE_TAIL_BYTES} of the most recently written `.log` under `dir`. */
function newestLogTail(dir: string, path: string | undefined, secrets: readonly string[]): { file: string; text: string } | undefined {
  const newest = path === undefined ? undefined : { path };
  if (!newest) return undefined;
  let bytes: Buffer;
  try {
    // Only the tail is read (and the few bytes before it, to find where a character starts); a log that became a
    // FIFO or a symlink since the walk is skipped.
    bytes = readBoundedFileSync(newest.path, { maxBytes: LIVE_TAIL_BYTES + 4, tail: true });
  } catch {
    return undefined;
  }
  // Cut at a line start where possible, never inside a UTF-8 character.
  let start = Math.max(0, bytes.length - LIVE_TAIL_BYTES);
  while (start > 0 && start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start += 1;
  const text = stripAnsi(bytes.subarray(start).toString("utf8"));
  return { file: newest.path.slice(dir.length + 1), text: redactSecrets(text, secrets) };
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
