export { storyKey, type StoryQueue, type StoryJob, type JobRepository, type EnqueueOutcome } from "./port.js";
export { EmbeddedQueue, type EmbeddedQueueOptions, type JobLease, type JobWorker, type QueueListeners } from "./embedded.js";
export { DeliveryLog, DEFAULT_DELIVERY_MEMORY } from "./delivery-log.js";
export type { JobRecord } from "./job-store.js";
export { listQuarantine, quarantineDir, salvageStory, type QuarantinedJob, type QuarantinedStory } from "./quarantine.js";
export { acquireLock, releaseLock, liveHolder, newLockOwner, type LockOwner } from "./job-lock.js";
export { claimHarnessHome, HarnessHomeInUseError, type HomeClaim } from "./home-lock.js";
