export { storyKey, type StoryQueue, type StoryJob, type JobRepository, type EnqueueOutcome } from "./port.js";
export { EmbeddedQueue, type EmbeddedQueueOptions, type JobLease, type JobWorker } from "./embedded.js";
export { DeliveryLog, DEFAULT_DELIVERY_MEMORY } from "./delivery-log.js";
export type { JobRecord } from "./job-store.js";
