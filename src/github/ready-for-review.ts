/** A draft pull request marked ready for review: what the story adapter and the outbox's delivery both do. */
import type { ProbotOctokit } from "probot";

/** Marks a draft pull request ready for review (REST cannot; GraphQL can). */
export async function markReadyForReview(octokit: InstanceType<typeof ProbotOctokit>, pullNodeId: string): Promise<void> {
  await octokit.graphql(`mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`, { id: pullNodeId });
}
