/**
 * The durable outbox: every GitHub write that reports a story, recorded on disk and retried
 * until GitHub takes it, in each story's order and behind its push.
 */
export { Outbox } from "./outbox.js";
export type { OutboxOptions } from "./options.js";
export { DEFAULT_RETRY_POLICY, retryVerdict, type RetryPolicy, type RetryVerdict } from "./retry.js";
export { OutboxStore } from "./store.js";
export { storyKeyOf, isFinal, PUSH_SLOT, type OutboxEntry, type OutboxStory, type OutboxWrite, type PushWrite } from "./types.js";
