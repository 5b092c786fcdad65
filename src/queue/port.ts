/**
 * The queue port between the webhook handlers (which only validate, deduplicate and enqueue)
 * and the runners. The embedded implementation keeps jobs durable on disk in the App's
 * process; a Redis-backed one (BullMQ) can implement the same port later.
 */

/** The repository a story belongs to, as GitHub described it in the webhook. */
export interface JobRepository {
  id: number;
  owner: string;
  name: string;
  /** HTTPS clone URL given by GitHub (`repository.clone_url`). */
  cloneUrl: string;
  defaultBranch: string;
}

/** One unit of work: start a story, or re-admit a blocked one. */
export interface StoryJob {
  /** Identifies the story across jobs: `<owner>/<name>#<issue>`. */
  storyKey: string;
  kind: "start" | "retry-blocked";
  installationId: number;
  repository: JobRepository;
  issue: { number: number; title: string; body: string };
  /** The story's pull request, when known (a retry names it). */
  pullNumber?: number;
  /** Login of the user whose action queued the job. */
  requestedBy: string;
  /** `X-GitHub-Delivery` of the webhook that queued it. */
  deliveryId: string;
  /** ISO-8601. */
  enqueuedAt: string;
}

export type EnqueueOutcome =
  | { accepted: true; jobId: string }
  | { accepted: false; reason: "duplicate-delivery" | "already-active" };

/** Where triggers put work and runners take it. */
export interface StoryQueue {
  /**
   * Adds a job unless its delivery was seen before or its story is already queued or running.
   * Must answer quickly: it is called before GitHub gets its webhook response.
   */
  enqueue(job: StoryJob): Promise<EnqueueOutcome>;
  /** True when a job of this story is queued or running. */
  isActive(storyKey: string): Promise<boolean>;
}

/** Builds the story key of an issue. */
export function storyKey(owner: string, name: string, issue: number): string {
  return `${owner}/${name}#${issue}`;
}
