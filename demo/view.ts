/**
 * What a maintainer sees of a story on GitHub, as text for a terminal: the pull request, the
 * check runs on its head (title and the start of each summary) and the comments. Pure.
 */

export interface ViewedCheck {
  name: string;
  status: string;
  conclusion: string | null;
  output: { title?: string | null; summary?: string | null };
  actions: { label: string }[];
}

export interface MaintainerView {
  pull: { number: number; title: string; draft: boolean; state: string; headRef: string } | undefined;
  checks: readonly ViewedCheck[];
  comments: readonly { user: string; body: string }[];
}

const SUMMARY_LINES = 12;
const COMMENT_LINES = 16;

function indent(text: string, lines: number, prefix: string): string {
  const all = text.replace(/\r\n/g, "\n").split("\n");
  const shown = all.slice(0, lines).map((line) => `${prefix}${line}`);
  if (all.length > lines) shown.push(`${prefix}… (${all.length - lines} more lines)`);
  return shown.join("\n");
}

/** GitHub's words for a check run's state, as a maintainer reads them (the API's `action_required` is GitHub's "Action required"). */
const STATE_WORDS: Record<string, string> = {
  success: "passed",
  failure: "failed",
  action_required: "needs your action",
  neutral: "neutral",
  cancelled: "cancelled",
  skipped: "skipped",
  timed_out: "timed out",
  stale: "stale",
  in_progress: "in progress",
  queued: "queued",
  pending: "pending",
  waiting: "waiting",
  requested: "requested",
  completed: "completed",
};

/** A check run's state or a conclusion in words, never the API's identifier. */
export function stateInWords(state: string): string {
  return STATE_WORDS[state] ?? state.replace(/_/g, " ");
}

function checkLine(check: ViewedCheck): string {
  const state = check.status === "completed" ? (check.conclusion ?? "completed") : check.status;
  const icon = state === "success" ? "✓" : state === "failure" || state === "action_required" ? "✗" : "…";
  const buttons = check.actions.length > 0 ? `   [${check.actions.map((action) => action.label).join("] [")}]` : "";
  return `  ${icon} ${check.name} — ${stateInWords(state)}${check.output.title ? `: ${check.output.title}` : ""}${buttons}`;
}

/** Renders the pull request, its check runs and its comments as indented text. */
export function renderMaintainerView(view: MaintainerView): string {
  if (!view.pull) return "  (no pull request yet)";
  const out = [
    `  Pull request #${view.pull.number} “${view.pull.title}” — ${view.pull.state}, ${view.pull.draft ? "draft" : "ready for review"} (branch ${view.pull.headRef})`,
  ];
  out.push(`  Check runs on the head commit (${view.checks.length}):`);
  // In the order the App created them: the pipeline's.
  for (const check of view.checks) {
    out.push(checkLine(check));
    if (check.output.summary) out.push(indent(check.output.summary, SUMMARY_LINES, "      │ "));
  }
  out.push(`  Comments (${view.comments.length}):`);
  for (const comment of view.comments) out.push(`    @${comment.user}:`, indent(comment.body, COMMENT_LINES, "      │ "));
  return out.join("\n");
}
