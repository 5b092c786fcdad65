/**
 * The queue's own troubles told on the story they concern: a job file set aside as unreadable,
 * a job that cannot start because the data directory refuses writes. Best effort, after the
 * log line: the disk may be full, GitHub may be down, and neither must stop the queue.
 */
import type { ProbotOctokit } from "probot";
import type { QueueListeners } from "../queue/index.js";
import type { GitHubLog } from "./log.js";
import { renderQuarantinedJob, renderWriteFailure } from "./render/replies.js";

export interface QueueNoticeDeps {
  /** An octokit authenticated as the installation. */
  installationOctokit: (installationId: number) => Promise<InstanceType<typeof ProbotOctokit>>;
  log: GitHubLog;
}

/** Listeners for {@link QueueListeners} that log, then comment on the story's issue. */
export function queueNoticeListeners(deps: QueueNoticeDeps): QueueListeners {
  const tell = (installationId: number, owner: string, repo: string, issueNumber: number, body: string): void => {
    void (async () => {
      const octokit = await deps.installationOctokit(installationId);
      await octokit.rest.issues.createComment({ owner, repo, issue_number: issueNumber, body });
    })().catch((error: unknown) => deps.log.warn({ err: { message: String(error) }, owner, repo, issueNumber }, "telling a story about a queue problem failed"));
  };
  return {
    onQuarantine: (quarantined) => {
      const story = quarantined.story;
      deps.log.error({ file: quarantined.file, reason: quarantined.reason, story }, "queue: job file quarantined");
      if (story) tell(story.installationId, story.owner, story.repo, story.issueNumber, renderQuarantinedJob(quarantined.file, quarantined.reason));
    },
    onWriteFailure: (job, error) => {
      deps.log.error({ story: job.storyKey, err: { message: error.message } }, "queue: a job could not be claimed; it stays queued");
      tell(job.installationId, job.repository.owner, job.repository.name, job.issue.number, renderWriteFailure((error as NodeJS.ErrnoException).code));
    },
  };
}
