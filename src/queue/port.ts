/**
 * The queue port between the webhook handlers (which only validate, deduplicate and enqueue)
 * and the runners. Two adapters implement it: the embedded queue (durable files in the App's
 * data folder, the default) and BullMQ on Redis (`HARNESS_QUEUE=redis://…`), where any number
 * of `harness worker` processes take jobs. The App and the runner depend on this file only.
 */
import type { LocalWork, WorkerReport } from "../status/model/index.js";
import type { QuarantinedJob } from "./quarantine.js";

/** The repository a story belongs to, as GitHub described it in the webhook. */
export interface JobRepository {
  id: number;
  owner: string;
  name: string;
  /** HTTPS clone URL given by GitHub (`repository.clone_url`). */
  cloneUrl: string;
  defaultBranch: string;
}

/** A review, or `/harness revise <text>`, as a writer submitted it: frozen into the job. */
export interface ReviewFeedback {
  kind: "review" | "command";
  by: string;
  /** The review's id, or the command comment's. */
  id: number;
  body: string;
  /** The review's inline comments, read through the review-comments API (`line` absent: no longer in the diff). */
  comments: { id: number; path: string; line?: number; body: string }[];
}

/** Another App's failing check suite on the story branch's head, with what its failing runs said. */
export interface CiFeedback {
  kind: "ci";
  suiteId: number;
  app: string;
  headSha: string;
  /** The failing runs: output, annotations, and for Actions the job log's last 64 KiB (redacted, ANSI stripped); `signature` names the failure. */
  checks: { name: string; conclusion: string; summary: string; annotations: string[]; log?: string; signature: string }[];
}

/** What starts a revision round: one or more triggers, batched. */
export interface RevisionRequest {
  triggers: (ReviewFeedback | CiFeedback)[];
}

/** One unit of work: start a story, re-admit a blocked one, or revise its open pull request. */
export interface StoryJob {
  /** Identifies the story across jobs: `<owner>/<name>#<issue>`. */
  storyKey: string;
  kind: "start" | "retry-blocked" | "revise";
  installationId: number;
  repository: JobRepository;
  /**
   * The issue as it was admitted: its title (one line), body and `updated_at`. Agents see this
   * text, never a later fetch, so an edit after admission is used only once a writer re-admits.
   */
  issue: { number: number; title: string; body: string; updatedAt?: string };
  /** The story's pull request, when known (a retry names it). */
  pullNumber?: number;
  /** A `revise` job's feedback, frozen as it was submitted. */
  revision?: RevisionRequest;
  /** Login of the user whose action queued the job. */
  requestedBy: string;
  /** `/harness accept-integrity`: the re-admitted run's test-integrity findings are accepted in `requestedBy`'s name. */
  acceptIntegrity?: true;
  /** `X-GitHub-Delivery` of the webhook that queued it. */
  deliveryId: string;
  /**
   * The event's own identity, which a replay under a new delivery id keeps: deduplicated like
   * the delivery id (the signature covers the body, not the `X-GitHub-Delivery` header).
   */
  eventKey?: string;
  /** ISO-8601. */
  enqueuedAt: string;
}

/** `batched`: a revise job of a story whose run is queued or running, kept for the story's next round. */
export type EnqueueOutcome = { accepted: true; jobId: string; batched?: true } | { accepted: false; reason: "duplicate-delivery" | "already-active" };

/**
 * The producer side, all a webhook handler needs: put work in, ask whether a story has work.
 * A story has at most one job, queued or running, whichever process or machine enqueued it.
 */
export interface JobIntake {
  /**
   * Adds a job unless its delivery (or its event, `eventKey`) was seen before or its story is
   * already queued or running.
   * Must answer quickly: it is called before GitHub gets its webhook response.
   */
  enqueue(job: StoryJob): Promise<EnqueueOutcome>;
  /** True when a job of this story is queued or running. */
  isActive(storyKey: string): Promise<boolean>;
}

/**
 * A job handed to a worker. The lease is the adapter's promise that no other worker runs this
 * job while it holds: the embedded adapter ties it to the live process, the Redis adapter to a
 * lock with a TTL that the adapter renews (its heartbeat) while the worker function runs.
 */
export interface JobLease {
  jobId: string;
  job: StoryJob;
  /** > 0 when a runner died (or was stopped) while running this job before. */
  interruptions: number;
}

/**
 * Runs one job. Its errors are logged by the queue; the job is finished either way. `signal`
 * aborts when the queue closes with `abortRunning`: the job is then left for the next start.
 */
export type JobWorker = (lease: JobLease, signal: AbortSignal) => Promise<void>;

/** How a lease is kept alive where liveness is not the process itself (Redis). */
export interface LeaseTiming {
  /** A lease not renewed for this long is taken to belong to a dead worker (kill -9, lost host). */
  lockTtlMs: number;
  /** How often the holder renews its lease; well under `lockTtlMs`. */
  heartbeatMs: number;
}

/** The Redis adapter's defaults: a lost worker's story is picked up within about a minute. */
export const DEFAULT_LEASE_TIMING: LeaseTiming = { lockTtlMs: 30_000, heartbeatMs: 10_000 };

/** A job as an operator sees it (`harness status`). */
export interface QueuedJobView {
  jobId: string;
  job: StoryJob;
  state: "queued" | "running";
  interruptions: number;
  /** ISO-8601, when a worker took it. */
  startedAt?: string;
}

/** What the queue tells its App about, beyond running jobs (the App tells the stories on GitHub). */
export interface QueueListeners {
  /** Told of every job file moved to `queue/quarantine/`. */
  onQuarantine?: (quarantined: QuarantinedJob) => void;
  /**
   * Told once when a job could not be claimed because a write failed (ENOSPC): the job stays
   * queued, nothing it took is kept, and it is tried again on every rescan until it runs.
   */
  onWriteFailure?: (job: StoryJob, error: Error) => void;
}
/** A worker's local work as it publishes it; `settle` runs at close, before the last report (its outbox's last pass). */
export interface LocalWorkSource {
  home: string;
  collect: () => Promise<LocalWork>;
  settle?: () => Promise<void>;
}

/** A job set aside in the queue itself (Redis) because its data is not a story job. */
export interface QuarantinedJobView {
  /** Its entry in the quarantine. */
  entry: string;
  jobId: string;
  /** The schema's issues, naming the field. */
  reason: string;
  /** The worker that found it. */
  worker: string;
  at: string;
  /** `<owner>/<name>#<issue>`, when enough of the data could be read. */
  story?: string;
}

/** The whole queue: producer side, worker side and an operator's view. */
export interface StoryQueue extends JobIntake {
  /** Jobs run at once by this process's worker (`HARNESS_CONCURRENCY`). */
  readonly concurrency: number;
  /** Starts running jobs with `worker`: now and whenever one becomes available. Call once. */
  start(worker: JobWorker): void;
  /** Resolves when no job is running in this process. */
  idle(): Promise<void>;
  /**
   * Stops taking jobs. With `abortRunning`, running workers get their signal aborted and their
   * jobs stay queued for the next worker; either way this waits for them.
   */
  close(options?: { abortRunning?: boolean }): Promise<void>;
  /** Every queued and running job, oldest first. */
  snapshot(): Promise<QueuedJobView[]>;
  /** Sets who is told of jobs set aside and writes that failed (an adapter without either omits it). */
  listen?(listeners: QueueListeners): void;
  /**
   * Where workers share no disk (Redis): publishes this process's {@link LocalWork}, read by
   * `collect` now and on every heartbeat until `close`, so every process sees it. An adapter
   * whose processes share one folder omits it (and `workerReports`).
   */
  shareLocalWork?(source: LocalWorkSource): void;
  /** Every worker's report, live or left by one that stopped with work on its disk. */
  workerReports?(): Promise<WorkerReport[]>;
  /** Where jobs are set aside in the queue itself (Redis): the newest of them and how many in all. */
  quarantinedJobs?(): Promise<{ jobs: QuarantinedJobView[]; total: number }>;
}
