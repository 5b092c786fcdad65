/** The story's pull request as the App opens it: its title and body. */
import { singleLine, TITLE_MAX_CHARS } from "./text.js";

/**
 * Title of a story's pull request, `Story #N: <issue title>`, one line and within GitHub's
 * title limit (an issue title may already use all of it; a longer pull request title is refused).
 */
export function renderPullTitle(issue: { number: number; title: string }): string {
  return singleLine(`Story #${issue.number}: ${issue.title}`, TITLE_MAX_CHARS);
}

/** Body of a story's pull request: it closes the issue, and says who works on it. */
export function renderPullBody(issueNumber: number): string {
  return `Closes #${issueNumber}\n\nThis pull request is worked on by story-harness; its checks and the status comment below show the progress.`;
}
