/**
 * The one key of a story: its issue in its repository, `owner/repo#issue` (two repositories'
 * issue #42 are two stories). The queue deduplicates by it, the outbox groups a story's writes
 * by it, the journal names the story by it, and logs and the status page show it. A leaf room:
 * every other room may stand on it.
 */

/** Builds the key of a story from its repository's owner and name and its issue number. */
export function storyKey(owner: string, repo: string, issueNumber: number): string {
  return `${owner}/${repo}#${issueNumber}`;
}
