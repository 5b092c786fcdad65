export {
  DEFAULT_LEASE_TIMING,
  type StoryQueue,
  type JobIntake,
  type StoryJob,
  type RevisionRequest,
  type ReviewFeedback,
  type CiFeedback,
  type JobRepository,
  type EnqueueOutcome,
  type JobLease,
  type JobWorker,
  type LeaseTiming,
  type QueuedJobView,
  type QueueListeners,
  type LocalWorkSource,
  type QuarantinedJobView,
} from "./port.js";
export { EmbeddedQueue, type EmbeddedQueueOptions } from "./embedded.js";
export { DeliveryLog, DEFAULT_DELIVERY_MEMORY } from "./delivery-log.js";
export { JobStore, type JobRecord } from "./job-store.js";
export { listQuarantine, quarantineDir, salvageJobStory, salvageStory, type QuarantinedJob, type QuarantinedStory } from "./quarantine.js";
export { acquireLock, releaseLock, liveHolder, newLockOwner, retireLockOwner, type LockOwner } from "./job-lock.js";
export { claimHarnessHome, HarnessHomeInUseError, type HomeClaim } from "./home-lock.js";
export { openStoryQueue, type QueueConfig } from "./open.js";
export type { BullmqQueue, BullmqQueueOptions } from "./bullmq/index.js";
export { parseRedisUrl, redactUrl, QueueUrlError } from "./bullmq/connection.js";
