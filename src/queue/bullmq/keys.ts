/** Names in Redis: the BullMQ queue, its job ids, and the adapter's own keys beside them. */

/** BullMQ key prefix and queue name: every key of story-harness starts with `harness:stories:`. */
export const KEY_PREFIX = "harness";
export const QUEUE_NAME = "stories";

/**
 * The job id of a story: one per story, so a second enqueue of a queued or running story adds
 * nothing (BullMQ keeps a job id unique). BullMQ refuses ids with `:`; story keys cannot hold
 * one, but the encoding keeps any story key safe.
 */
export function storyJobId(storyKey: string): string {
  return `story-${encodeURIComponent(storyKey)}`;
}

/** The adapter's own keys, in the queue's namespace. */
export function adapterKeys(
  prefix = KEY_PREFIX,
  queue = QUEUE_NAME,
): {
  delivery: (deliveryId: string) => string;
  runs: string;
  slots: (installationId: number) => string;
  workers: string;
  worker: (id: string) => string;
  quarantine: string;
  pending: (storyKey: string) => string;
  pendingStories: string;
  storyTurn: (storyKey: string) => string;
} {
  const base = `${prefix}:${queue}:harness`;
  return {
    delivery: (deliveryId) => `${base}:delivery:${deliveryId}`,
    /** Hash: job id → how many times a worker started running it (interruptions = starts - 1). */
    runs: `${base}:runs`,
    /** Sorted set per installation: job ids holding one of its slots, scored by when the hold expires. */
    slots: (installationId) => `${base}:slots:${installationId}`,
    /** Sorted set of worker ids, scored by when each last renewed its report; the report itself in `worker:<id>`. */
    workers: `${base}:workers`,
    worker: (id) => `${base}:worker:${id}`,
    /** Hash: job id → its quarantine record (data that is not a story job, kept for an operator). */
    quarantine: `${base}:quarantine`,
    /** List per story: revise jobs that arrived while its job was queued or running, oldest first. */
    pending: (storyKey) => `${base}:pending:${storyKey}`,
    /** Set of the story keys with a pending list, so a list its job left behind is found (a worker that died). */
    pendingStories: `${base}:pending-stories`,
    /** Per story: the lock its admissions of revisions and its promotions take turns on, across processes. */
    storyTurn: (storyKey) => `${base}:turn:${storyKey}`,
  };
}
