/**
 * One-off notices on a story, through the outbox like every other report: the announcement
 * that a story started (a 👀 reaction and a comment linking its pull request), the comment
 * saying a story could not start or could not be delivered, the reply to a label on a
 * completed story, and the queue's own troubles. Each is recorded before it is tried and
 * retried until GitHub accepts it, across restarts. A notice the data directory cannot hold (a
 * full disk) is still tried from memory: that is when the story most needs to hear it.
 */
import { errorDetails, type GitHubLog } from "../index.js";
import { storyKeyOf, type Outbox, type OutboxStory, type OutboxWrite } from "../../outbox/index.js";
import { renderStoryStarted } from "./render/index.js";

/** One notice: the slot names it within its story (a second put of the slot replaces it while pending). */
export interface StoryNotice {
  slot: string;
  write: Extract<OutboxWrite, { kind: "comment" | "reaction" }>;
}

/**
 * Records the notices in the outbox, then tries them once now (a refusal is retried by the
 * outbox). With `background`, a durable outbox delivers them after this resolves, behind the
 * story's reports before them: the caller waits for the disk, not for GitHub. One in memory is
 * tried now all the same (nothing would deliver them later).
 */
export async function postNotices(
  outbox: Outbox | Promise<Outbox>,
  story: OutboxStory,
  notices: readonly StoryNotice[],
  log: GitHubLog,
  options: { background?: boolean } = {},
): Promise<void> {
  const box = await outbox;
  for (const notice of notices) {
    try {
      await box.put(story, notice.slot, notice.write);
    } catch (error) {
      // The entry is kept in memory (put records it there first) and delivered from there.
      log.warn(
        { err: errorDetails(error), slot: notice.slot, story: storyKeyOf(story) },
        "outbox: a notice could not be recorded on disk; it is tried from memory",
      );
    }
  }
  if (options.background === true && box.durable) box.deliverSoon(story);
  else await box.flush(story);
}

/** A comment on the story's issue. */
export function commentNotice(slot: string, issueNumber: number, body: string): StoryNotice {
  return { slot, write: { kind: "comment", issueNumber, body } };
}

/** The announcement on the issue that its story started in `pull`. */
export function announceNotices(issueNumber: number, pull: { pullNumber: number; pullUrl: string }): StoryNotice[] {
  return [
    { slot: `reaction:started:${pull.pullNumber}`, write: { kind: "reaction", issueNumber, content: "eyes" } },
    commentNotice(`comment:started:${pull.pullNumber}`, issueNumber, renderStoryStarted(pull.pullNumber, pull.pullUrl)),
  ];
}
