/**
 * Each worker's report in Redis: the work only its own disk holds (undelivered GitHub writes,
 * quarantined job files, its newest story runs) and the jobs it runs, renewed on its heartbeat, so `harness status` on
 * any machine shows every worker's. A report lives in its own key with a long TTL and is indexed
 * in a sorted set scored by when it was last renewed (Redis's clock): a worker that stops renewing
 * (killed, or stopped with work left on its disk) still shows, marked not live, until it comes
 * back or the TTL passes. A worker that stops with nothing left withdraws its report.
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import type { Redis } from "ioredis";
import { schemas } from "../../schema/index.js";
import type { LocalWork, ReportedRun, WorkerReport } from "../../status/model/index.js";

/** Entries of each list a report carries; the rest are counted in `omitted`. */
export const REPORT_ENTRIES = 100;
/** Characters of an entry's last error a report keeps. */
const ERROR_CHARS = 300;
/** A report not renewed for a day is forgotten: its worker is gone for good, or was renamed. */
export const DEFAULT_REPORT_MEMORY_MS = 24 * 3600 * 1000;

/** Story runs a report carries (the status page shows that many). */
export const REPORT_RUNS = 25;
/** Characters of a run's title and detail, tasks of a run, and characters of its live log tail a report keeps. */
const RUN_TEXT_CHARS = 300;
const RUN_TASKS = 50;
const RUN_TAIL_CHARS = 4096;

/** A run cut to what a report carries. */
function boundRun(run: ReportedRun): ReportedRun {
  return {
    ...run,
    title: run.title.slice(0, RUN_TEXT_CHARS),
    ...(run.detail !== undefined ? { detail: run.detail.slice(0, RUN_TEXT_CHARS) } : {}),
    tasks: run.tasks.slice(0, RUN_TASKS).map((task) => ({ ...task, title: task.title.slice(0, RUN_TEXT_CHARS) })),
    ...(run.liveTail ? { liveTail: { file: run.liveTail.file.slice(0, 1000), text: run.liveTail.text.slice(-RUN_TAIL_CHARS) } } : {}),
    ...(run.liveTools
      ? {
          liveTools: {
            file: run.liveTools.file.slice(0, 1000),
            calls: run.liveTools.calls.slice(-10).map((call) => ({ tool: call.tool.slice(0, 80), summary: call.summary.slice(0, 200) })),
          },
        }
      : {}),
  };
}

const PUBLISH = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
return now
`;

type StoredReport = Omit<WorkerReport, "live">;

export interface WorkerReportKeys {
  /** Sorted set: worker id → when its report was last renewed (ms, Redis's clock). */
  index: string;
  report: (worker: string) => string;
}

export class WorkerReports {
  /**
   * This process's id in the reports: its host and data directory, which one process holds at a
   * time, so a worker that restarts on the same `HARNESS_HOME` takes over the report it left.
   */
  self = `${hostname()}:${process.pid}`;

  constructor(
    private readonly redis: Redis,
    private readonly keys: WorkerReportKeys,
    /** A report older than this is shown as not live (a few heartbeats). */
    private readonly staleMs: number,
    private readonly memoryMs = DEFAULT_REPORT_MEMORY_MS,
  ) {}

  /** Names this process's report after the data directory it holds. */
  claim(home: string): void {
    this.self = `${hostname()}:${createHash("sha256").update(home).digest("hex").slice(0, 12)}`;
  }

  /** Publishes (or renews) this process's report. */
  async publish(work: LocalWork, running: string[], home: string): Promise<StoredReport> {
    const report: StoredReport = {
      worker: this.self,
      // A host name is at most 64 characters on Linux (253 in DNS), inside the schema's 255.
      host: hostname(),
      pid: process.pid,
      home: home.slice(0, 4096),
      running: running.slice(0, 1000),
      quarantined: work.quarantined.slice(0, REPORT_ENTRIES),
      undelivered: work.undelivered
        .slice(0, REPORT_ENTRIES)
        .map((entry) => (entry.lastError ? { ...entry, lastError: entry.lastError.slice(0, ERROR_CHARS) } : entry)),
      ...(work.runs ? { runs: work.runs.slice(0, REPORT_RUNS).map(boundRun) } : {}),
      omitted: { quarantined: Math.max(0, work.quarantined.length - REPORT_ENTRIES), undelivered: Math.max(0, work.undelivered.length - REPORT_ENTRIES) },
      at: new Date().toISOString(),
    };
    schemas().validate("queue-worker-report", report, `worker report of ${this.self}`);
    await this.redis.eval(PUBLISH, 2, this.keys.index, this.keys.report(this.self), this.self, JSON.stringify(report), String(this.memoryMs));
    return report;
  }

  /** Removes this process's report (a clean stop with nothing left on its disk). */
  async withdraw(): Promise<void> {
    await this.redis.multi().zrem(this.keys.index, this.self).del(this.keys.report(this.self)).exec();
  }

  /** Every report, oldest worker first; `at` is Redis's time of the last renewal. */
  async list(): Promise<WorkerReport[]> {
    const [seconds, micros] = await this.redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    // Flat pairs over RESP2, [member, score] tuples over RESP3.
    const indexed = ((await this.redis.zrange(this.keys.index, 0, "-1", "WITHSCORES")) as unknown[]).flat().map(String);
    // Stryker disable next-line ConditionalExpression,ArrayDeclaration: a pair misread from a score names a report key that does not exist, which the list leaves out as it does an expired one
    const workers = indexed.flatMap((member, index): Array<[string, number]> => (index % 2 === 0 ? [[member, Number(indexed[index + 1])]] : []));
    if (workers.length === 0) return [];
    const texts = await this.redis.mget(...workers.map(([worker]) => this.keys.report(worker)));
    const reports: WorkerReport[] = [];
    workers.forEach(([, renewedAt], index) => {
      // Stryker disable next-line StringLiteral: any text in place of a missing report fails the schema the same way
      const report = schemas().parseValid<StoredReport>("queue-worker-report", texts[index] ?? "");
      // An expired or damaged report is left out; the index forgets it on the next publish.
      // Stryker disable next-line EqualityOperator: `<` differs only for a report renewed exactly staleMs ago, a millisecond no reading of Redis's clock can pin
      if (report) reports.push({ ...report, at: new Date(renewedAt).toISOString(), live: now - renewedAt <= this.staleMs });
    });
    return reports;
  }
}
