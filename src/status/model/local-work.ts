/**
 * The status page's model of one worker's local work: what it holds on its own disk, its newest
 * runs, and the report it publishes through the queue where workers share no disk (Redis). A
 * leaf, so the queue that carries these reports and the status page that reads them both stand on it.
 */

/**
 * What a worker process holds on its own disk that no other process can read: its GitHub writes
 * not delivered yet (or given up) and its quarantined job files. Where workers share no disk
 * (Redis), each publishes it through the queue so an operator sees every worker's.
 */
export interface LocalWork {
  quarantined: Array<{ file: string; story?: string }>;
  /** Its newest story runs (the status page's Running and Recent outcomes), read from its own `runs/`. */
  runs?: ReportedRun[];
  undelivered: Array<{ story: string; slot: string; kind: string; state: "pending" | "undeliverable"; attempts: number; nextAt?: string; lastError?: string }>;
}

/** A story's latest run on one machine, as the status page shows it (read from its journal). */
export interface ReportedRun {
  /** The run directory's story folder (an issue number, or a local story's slug). */
  story: string;
  runId: string;
  title: string;
  outcome: "running" | "completed" | "blocked";
  attempt: number;
  maxAttempts: number;
  /** The stage running now, or the last one that ran. */
  stage?: string;
  failureClass?: string;
  detail?: string;
  /** ISO-8601 of the run's first and latest event. */
  startedAt: string;
  updatedAt: string;
  tasks: Array<{ id: string; title: string; wave: number; state: string; attempt: number }>;
  /** The end of the newest log of a running run (redacted, escapes stripped). */
  liveTail?: { file: string; text: string };
  /** The newest seat's latest tool calls, newest last, read from its events (redacted, bounded). */
  liveTools?: { file: string; calls: Array<{ tool: string; summary: string }> };
}

/** One worker's published report, as `harness status` reads it. */
export interface WorkerReport extends LocalWork {
  /** Identifies the worker: its host and a digest of its `HARNESS_HOME` (a restart there takes its report over). */
  worker: string;
  host: string;
  pid: number;
  /** Its `HARNESS_HOME`. */
  home: string;
  /** Job ids it runs now. */
  running: string[];
  /** Entries left out of each list to keep the report bounded. */
  omitted: { quarantined: number; undelivered: number };
  /** ISO-8601, when it published this (by the queue's clock). */
  at: string;
  /** False once the worker has not renewed it for a few intervals: it died, or stopped with work left. */
  live: boolean;
}
