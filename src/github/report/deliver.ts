/** Performs one outbox write against GitHub: the thin layer that calls the API. */
import type { ProbotOctokit } from "probot";
import { addLabel, hasStatus, markReadyForReview, removeLabel } from "../index.js";
import { STATUS_MARKER } from "./render/index.js";
import type { OutboxEntry } from "../../outbox/index.js";

type Octokit = InstanceType<typeof ProbotOctokit>;

/**
 * The outbox's delivery through GitHub's API: each entry sent with an octokit of its story's
 * installation (one without its own retries: the outbox retries).
 */
export function githubDelivery(octokitFor: (installationId: number) => Promise<Octokit>): (entry: OutboxEntry) => Promise<OutboxEntry["result"]> {
  return async (entry) => deliverEntry(await octokitFor(entry.story.installationId), entry);
}

/** Sends the entry's current state; resolves with what later writes of the slot need. */
export async function deliverEntry(octokit: Octokit, entry: OutboxEntry): Promise<OutboxEntry["result"]> {
  const { owner, repo } = entry.story;
  const write = entry.write;
  switch (write.kind) {
    case "check": {
      const common = {
        owner,
        repo,
        status: write.status,
        output: write.output,
        ...(write.startedAt ? { started_at: write.startedAt } : {}),
        ...(write.status === "completed" ? { conclusion: write.conclusion ?? "neutral", completed_at: write.completedAt ?? new Date().toISOString() } : {}),
      };
      // An empty list removes a Retry button left from an earlier state.
      const update = (checkRunId: number) => octokit.rest.checks.update({ ...common, check_run_id: checkRunId, actions: write.actions ?? [] });
      // Without a recorded id, the check runs a dead App may have created are the ones this state closes.
      const ids =
        entry.result?.checkRunId !== undefined
          ? [entry.result.checkRunId]
          : write.adoptUnfinished === true
            ? await unfinishedRuns(octokit, owner, repo, write)
            : [];
      for (const id of ids) await update(id);
      if (ids[0] !== undefined) return { checkRunId: ids[0] };
      const { data } = await octokit.rest.checks.create({
        ...common,
        name: write.name,
        head_sha: write.headSha,
        external_id: write.externalId,
        ...(write.actions ? { actions: write.actions } : {}),
      });
      return { checkRunId: data.id };
    }
    case "status-comment": {
      let id = entry.result?.commentId ?? (await findStatusComment(octokit, owner, repo, write.issueNumber, write.botLogin));
      if (id !== undefined) {
        try {
          await octokit.rest.issues.updateComment({ owner, repo, comment_id: id, body: write.body });
          return { commentId: id };
        } catch (error) {
          // Someone deleted it: post a new one.
          if (!hasStatus(error, 404)) throw error;
          id = undefined;
        }
      }
      const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: write.issueNumber, body: write.body });
      return { commentId: data.id };
    }
    case "label":
      if (write.present) await addLabel(octokit, owner, repo, write.numbers, write.label);
      else await removeLabel(octokit, owner, repo, write.numbers, write.label);
      return {};
    case "ready-for-review":
      await markReadyForReview(octokit, write.pullNodeId);
      return {};
    case "comment":
      await octokit.rest.issues.createComment({ owner, repo, issue_number: write.issueNumber, body: write.body });
      return {};
    case "push":
      // Git, not the API: the outbox hands it to its pusher before it gets here.
      throw new Error("a push is delivered by the outbox's pusher, not the API");
    case "reaction":
      await octokit.rest.reactions.createForIssue({ owner, repo, issue_number: write.issueNumber, content: write.content });
      return {};
  }
}

/** The App's own status comment on an issue or pull request, found by its marker. */
async function findStatusComment(
  octokit: Octokit,
  owner: string,
  repo: string,
  issueNumber: number,
  botLogin: string | undefined,
): Promise<number | undefined> {
  const comments = await octokit.paginate(octokit.rest.issues.listComments, { owner, repo, issue_number: issueNumber, per_page: 100 });
  // Only the App's own comment counts: anyone can paste the marker into theirs.
  const own = comments.find(
    (comment) => (comment.body ?? "").startsWith(STATUS_MARKER) && (botLogin ? comment.user?.login === botLogin : comment.user?.type === "Bot"),
  );
  return own?.id;
}

/** The check runs of the write's name, head and external id that are not completed (a dead App's, whose ids it never recorded). */
async function unfinishedRuns(octokit: Octokit, owner: string, repo: string, write: Extract<OutboxEntry["write"], { kind: "check" }>): Promise<number[]> {
  const runs = await octokit.paginate(octokit.rest.checks.listForRef, {
    owner,
    repo,
    ref: write.headSha,
    check_name: write.name,
    filter: "all",
    per_page: 100,
  });
  return runs.filter((run) => run.external_id === write.externalId && run.status !== "completed").map((run) => run.id);
}
