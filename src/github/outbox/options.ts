/** How an outbox is opened: where it keeps its entries, how it reaches GitHub and git. */
import type { ProbotOctokit } from "probot";
import type { GitHubLog } from "../index.js";
import type { RetryPolicy } from "./retry.js";
import type { OutboxStory, PushWrite } from "./types.js";

type Octokit = InstanceType<typeof ProbotOctokit>;

export interface OutboxOptions {
  /** `<harnessHome>/outbox`. Absent: kept in memory only (a reporter used outside the App). */
  dir?: string;
  /** An octokit authenticated as the installation, without its own retries (the outbox retries). */
  octokitFor: (installationId: number) => Promise<Octokit>;
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
