/** The one status comment on a story's pull request: found by its hidden marker, edited in place. */
import type { ProbotOctokit } from "probot";
import type { StorySnapshot } from "../../pipeline/index.js";
import { renderStatusComment, STATUS_MARKER } from "./render/index.js";
import type { RenderOptions } from "./render/index.js";

export interface StatusCommentTarget {
  octokit: ProbotOctokit;
  owner: string;
  repo: string;
  pullNumber: number;
  /** What to render with (secrets to remove, the admitted revision), asked on every post. */
  renderOptions: () => RenderOptions;
  botLogin?: string;
}

/** Posts and edits the status comment of one pull request; searches for an existing one on first use. */
export class StatusComment {
  private commentId: number | undefined;
  private searched = false;
  private lastBody: string | undefined;

  constructor(private readonly target: StatusCommentTarget) {}

  /** Shows `snapshot` in the status comment; creates it when none exists, skips an unchanged body. */
  async show(snapshot: StorySnapshot): Promise<void> {
    const body = renderStatusComment(snapshot, this.target.renderOptions());
    if (body === this.lastBody) return;
    const { octokit, owner, repo, pullNumber } = this.target;
    // Search once, so an App restarted mid-story edits the comment it posted before.
    if (!this.searched) {
      this.commentId = await this.find();
      this.searched = true;
    }
    if (this.commentId === undefined) {
      const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: pullNumber, body });
      this.commentId = data.id;
    } else {
      await octokit.rest.issues.updateComment({ owner, repo, comment_id: this.commentId, body });
    }
    this.lastBody = body;
  }

  private async find(): Promise<number | undefined> {
    const { octokit, owner, repo, pullNumber, botLogin } = this.target;
    const comments = await octokit.paginate(octokit.rest.issues.listComments, { owner, repo, issue_number: pullNumber, per_page: 100 });
    // Only the App's own comment counts: anyone can paste the marker into theirs.
    const own = comments.find(
      (comment) => (comment.body ?? "").startsWith(STATUS_MARKER) && (botLogin ? comment.user?.login === botLogin : comment.user?.type === "Bot"),
    );
    return own?.id;
  }
}
