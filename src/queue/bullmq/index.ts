export { BullmqQueue, DEFAULT_DELIVERY_MEMORY_MS, type BullmqQueueOptions } from "./bullmq-queue.js";
export { parseRedisUrl, redactUrl, QueueUrlError, type RedisTarget } from "./connection.js";
export { storyJobId } from "./keys.js";
