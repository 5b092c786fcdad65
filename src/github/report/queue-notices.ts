/**
 * The queue's own troubles told on the story they concern: a job file set aside as unreadable,
 * a job that cannot start because the data directory refuses writes. Logged first, then told
 * through the outbox, so a GitHub refusal (a rate limit, a 502) is retried rather than lost;
 * neither a full disk nor GitHub being down stops the queue.
 */
import type { QueueListeners } from "../../queue/index.js";
import type { GitHubLog } from "../index.js";
import { commentNotice, postNotices } from "./notices.js";
import type { Outbox, OutboxStory } from "../../outbox/index.js";
import { renderQuarantinedJob, renderWriteFailure } from "./render/index.js";

export interface QueueNoticeDeps {
  /** The App's outbox (its writes authenticate as the story's installation). */
  outbox: Outbox | Promise<Outbox>;
  log: GitHubLog;
}

/** Listeners for {@link QueueListeners} that log, then comment on the story's issue through the outbox. */
export function queueNoticeListeners(deps: QueueNoticeDeps): QueueListeners {
  const tell = (story: OutboxStory, slot: string, body: string): void => {
    postNotices(deps.outbox, story, [commentNotice(slot, story.issueNumber, body)], deps.log).catch((error: unknown) =>
      deps.log.warn(
        { err: { message: String(error) }, owner: story.owner, repo: story.repo, issueNumber: story.issueNumber },
        "telling a story about a queue problem failed",
      ),
    );
  };
  return {
    onQuarantine: (quarantined) => {
      const story = quarantined.story;
      deps.log.error(
        { file: quarantined.file, reason: quarantined.reason, story, ...(quarantined.kept ? { kept: quarantined.kept } : {}) },
        "queue: job file quarantined",
      );
      if (story)
        tell(
          { installationId: story.installationId, owner: story.owner, repo: story.repo, issueNumber: story.issueNumber },
          `comment:quarantined:${quarantined.file}`,
          renderQuarantinedJob(quarantined.file, quarantined.reason, quarantined.kept),
        );
    },
    onWriteFailure: (job, error) => {
      deps.log.error({ story: job.storyKey, err: { message: error.message } }, "queue: a job could not be claimed; it stays queued");
      const story = { installationId: job.installationId, owner: job.repository.owner, repo: job.repository.name, issueNumber: job.issue.number };
      tell(story, `comment:write-failure:${job.deliveryId}`, renderWriteFailure((error as NodeJS.ErrnoException).code));
    },
  };
}
