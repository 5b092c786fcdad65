/** How an outbox is opened: where it keeps its entries, how it reaches GitHub and git. */
import type { GitHubLog } from "../github/index.js";
import type { RetryPolicy } from "./retry.js";
import type { OutboxEntry, OutboxStory, PushWrite } from "./types.js";

export interface OutboxOptions {
  /** `<harnessHome>/outbox`. Absent: kept in memory only (a reporter used outside the App). */
  dir?: string;
  /**
   * Sends an entry's current state to GitHub (the GitHub room's `githubDelivery`, with octokits
   * that do not retry by themselves: the outbox retries); resolves with what later writes of
   * the slot need.
   */
  deliver: (entry: OutboxEntry) => Promise<OutboxEntry["result"]>;
  log: GitHubLog;
  policy?: Partial<RetryPolicy>;
  /** The tokens the outbox's octokits were given, so reporters redact them too. */
  secretsSeen?: () => readonly string[];
  /**
   * Pushes a story's work (git, outside this room); throws an error with `retriable: false`
   * when GitHub refused it for good. Without one, a push entry fails and is retried.
   */
  pusher?: (story: OutboxStory, push: PushWrite) => Promise<void>;
  /** How often due retries are looked for (default 500 ms). */
  tickMs?: number;
  now?: () => number;
}
