export {
  storyKey,
  DEFAULT_LEASE_TIMING,
  type StoryQueue,
  type JobIntake,
  type StoryJob,
  type JobRepository,
  type EnqueueOutcome,
  type JobLease,
  type JobWorker,
  type LeaseTiming,
  type QueuedJobView,
} from "./port.js";
export { EmbeddedQueue, type EmbeddedQueueOptions } from "./embedded.js";
export { DeliveryLog, DEFAULT_DELIVERY_MEMORY } from "./delivery-log.js";
export type { JobRecord } from "./job-store.js";
export { openStoryQueue, type QueueConfig } from "./open.js";
export type { BullmqQueue, BullmqQueueOptions } from "./bullmq/index.js";
