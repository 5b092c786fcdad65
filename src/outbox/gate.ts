/**
 * What happens to the reports that waited behind a story's push once the push is finally
 * refused (after the job that made them ended): none of them may claim the work arrived. The
 * check runs on the head GitHub has are closed as failed with GitHub's words, the rest (check
 * runs on the unpushed commit, the status comment, ready for review) is withheld (kept, listed
 * in `harness status`), and the story's issue is told and labelled blocked.
 */
import { BLOCKED_LABEL } from "../github/index.js";
import { renderPushRefusedCheck, renderPushRefusedDetail, renderStoryStopped } from "../github/report/render/index.js";
import type { OutboxEntry, OutboxWrite, PushWrite } from "./types.js";

/** The rewritten followers, and the writes that tell the story (none when nothing waited: the job still reports). */
export function afterRefusedPush(
  push: PushWrite,
  why: string,
  followers: readonly OutboxEntry[],
  at: string,
): { entries: OutboxEntry[]; notices: Array<{ slot: string; write: OutboxWrite }> } {
  if (followers.length === 0) return { entries: [], notices: [] };
  const output = renderPushRefusedCheck(push.branch, push.sha, why);
  const entries = followers.map((entry): OutboxEntry => {
    // A check run on the unpushed commit cannot exist; one on the head GitHub has says what happened.
    if (entry.write.kind === "check" && entry.write.headSha !== push.sha) {
      return {
        ...entry,
        write: { ...entry.write, status: "completed", conclusion: "failure", completedAt: at, output, actions: [] },
        attempts: 0,
        updatedAt: at,
      };
    }
    return {
      ...entry,
      state: "undeliverable",
      lastError: `withheld: the push it reports on was refused (${why.split("\n")[0]?.slice(0, 200) ?? ""})`,
      updatedAt: at,
    };
  });
  const story = followers[0]!.story;
  const detail = renderPushRefusedDetail({ branch: push.branch, sha: push.sha, refusal: why });
  const numbers = [story.issueNumber, ...(story.pullNumber ? [story.pullNumber] : [])];
  return {
    entries,
    notices: [
      { slot: "label:blocked", write: { kind: "label", label: BLOCKED_LABEL, numbers, present: true } },
      {
        slot: `comment:push-refused:${push.sha}`,
        write: {
          kind: "comment",
          issueNumber: story.issueNumber,
          body: renderStoryStopped("finished, but its result could not be delivered", "push-refused", detail),
        },
      },
    ],
  };
}
