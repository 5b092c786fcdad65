/** The records of the outbox: one GitHub write that reports a story, by slot. */
import type { ProcessIdentity } from "../exec/index.js";
import type { CheckRunOutput } from "../github/report/render/index.js";
import { storyKey } from "../story-key/index.js";

/** The story a write reports on; the installation authenticates its delivery. */
export interface OutboxStory {
  installationId: number;
  owner: string;
  repo: string;
  issueNumber: number;
  pullNumber?: number;
}

/** The state GitHub should show, per kind of write. A later write to the same slot replaces it. */
export type OutboxWrite =
  | {
      kind: "check";
      name: string;
      headSha: string;
      externalId: string;
      status: "queued" | "in_progress" | "completed";
      conclusion?: "success" | "failure" | "neutral" | "cancelled" | "skipped" | "timed_out" | "action_required";
      startedAt?: string;
      completedAt?: string;
      output: CheckRunOutput;
      actions?: Array<{ label: string; description: string; identifier: string }>;
      /**
       * Set when an App that died may have created this check run without recording its id (its
       * answer was lost with it): delivery first closes the unfinished check runs of the same name,
       * head and external id instead of creating another that would leave them open.
       */
      adoptUnfinished?: boolean;
    }
  | { kind: "status-comment"; issueNumber: number; body: string; botLogin?: string }
  | { kind: "label"; label: string; numbers: number[]; present: boolean }
  | { kind: "ready-for-review"; pullNodeId: string }
  | { kind: "comment"; issueNumber: number; body: string }
  | { kind: "reaction"; issueNumber: number; content: "eyes" }
  /**
   * The story's final push (git, not the API): the reports recorded after it wait until it went
   * through, so a conclusion never claims work the pull request does not hold.
   */
  | { kind: "push"; repositoryId: number; repoDir: string; branch: string; sha: string; runDir?: string };

/** The push of a story's work, as the outbox's pusher receives it. */
export type PushWrite = Extract<OutboxWrite, { kind: "push" }>;

/** The one slot of a story's pending push (a newer tip replaces a pending one). */
export const PUSH_SLOT = "push";

export interface OutboxEntry {
  id: string;
  story: OutboxStory;
  /** Identifies what is written within the story (`check:<name>:<n>`, `status-comment`, …). */
  slot: string;
  write: OutboxWrite;
  /** `delivered` once GitHub accepted the latest state; `undeliverable` once it never will. */
  state: "pending" | "delivered" | "undeliverable";
  /** Failed attempts at the current state. */
  attempts: number;
  /** Not before this time (ISO-8601): `retry-after`, a rate-limit reset, or the backoff. */
  nextAt?: string;
  lastError?: string;
  /** What GitHub answered that later writes of the slot need. */
  result?: { checkRunId?: number; commentId?: number };
  /** The process that wrote the entry: after a crash, its unfinished check runs are closed. */
  writer: Pick<ProcessIdentity, "pid" | "startTime">;
  createdAt: string;
  updatedAt: string;
}

/** The key that groups a story's entries. */
export function storyKeyOf(story: OutboxStory): string {
  return storyKey(story.owner, story.repo, story.issueNumber);
}

/** True when a delivered entry needs nothing more, whatever happens to its writer. */
export function isFinal(write: OutboxWrite): boolean {
  return write.kind !== "check" || write.status === "completed";
}
