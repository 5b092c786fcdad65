/** `issue_comment.created` with `/harness` commands, from a person with write access. */
import type { Context } from "probot";
import { parseCommands, type HarnessCommand } from "../commands/index.js";
import { hasLabel } from "../index.js";
import { admitActor, isAllowedBot } from "./admission.js";
import { renderHelp, renderNotAStory, renderNotPermitted, renderUnknownCommand } from "../report/render/index.js";
import { storyIssueFromBranch } from "../index.js";
import {
  admissionPolicy,
  DEFAULT_STORY_LABEL,
  isBotActor,
  reply,
  scopeOf,
  type TriggerDeps,
  type TriggerEvent,
  type TriggerOutcome,
  type TriggerScope,
} from "./deps.js";
import { loadStoryIssue, readmitBlockedStory, type StoryIssue } from "./readmit.js";
import { currentPull, enqueueRevision, storyOfPull } from "./revise.js";
import { renderReviseNeedsText } from "../report/render/index.js";

type CommentPayload = Context<"issue_comment.created">["payload"];

/** Each kind of command once, in order of appearance: repeating one in a comment does not repeat its effect. */
function distinct(commands: readonly HarnessCommand[]): HarnessCommand[] {
  const seen = new Set<string>();
  return commands.filter((command) => {
    const key = command.kind === "unknown" ? `unknown:${command.name}` : command.kind;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Acts on the commands of a new comment. Edited or deleted comments, bots (the App included)
 * and comments without commands are ignored; people without write access get a reply and
 * nothing else. The result of `retry-blocked` or `accept-integrity` wins over replies when several
 * commands appear; when both appear, the first re-admits and the second finds the story queued.
 */
export async function handleIssueComment(context: TriggerEvent<"issue_comment.created">, deps: TriggerDeps): Promise<TriggerOutcome> {
  const { payload } = context;
  if (payload.action !== "created") return { action: "ignored", reason: "not-created" };
  const { comment } = payload;
  const viaOtherApp = comment.performed_via_github_app && !isAllowedBot(comment.user ?? {}, admissionPolicy(deps));
  if (isBotActor(comment.user, deps) || isBotActor(payload.sender, deps) || viaOtherApp) {
    return { action: "ignored", reason: "bot" };
  }
  // Stryker disable next-line StringLiteral: any text without a `/harness` line parses to no command, like an absent body
  const commands = distinct(parseCommands(comment.body ?? ""));
  if (commands.length === 0) return { action: "ignored", reason: "no-command" };
  const scope = scopeOf(context.octokit, context.id, payload.repository, payload.installation, deps);
  if (!scope) return { action: "ignored", reason: "no-installation" };
  scope.eventKey = `issue_comment/${comment.id}`;
  const author = comment.user?.login ?? payload.sender.login;
  const here = payload.issue.number;
  if ((await admitActor(await scope.octokit(), scope.owner, scope.repo, comment.user ?? payload.sender, admissionPolicy(deps))) !== "admitted") {
    await reply(scope, here, renderNotPermitted(author));
    return { action: "replied", reason: "not-permitted" };
  }
  let result: TriggerOutcome | undefined;
  for (const command of commands) {
    if (command.kind === "help") {
      await reply(scope, here, renderHelp());
      result ??= { action: "replied", reason: "help" };
    } else if (command.kind === "unknown") {
      await reply(scope, here, renderUnknownCommand(command.name));
      result ??= { action: "replied", reason: "unknown-command" };
    } else if (command.kind === "revise") {
      result = await reviseFromComment(scope, payload, command.text, comment.id, author, deps);
    } else {
      result = await retryFromComment(scope, payload, author, deps, command.kind === "accept-integrity");
    }
  }
  // Stryker disable next-line ObjectLiteral,StringLiteral: every command sets a result, and there is one at least; the fallback only satisfies the type
  return result ?? { action: "ignored", reason: "no-command" };
}

async function retryFromComment(
  scope: TriggerScope,
  payload: CommentPayload,
  author: string,
  deps: TriggerDeps,
  acceptIntegrity: boolean,
): Promise<TriggerOutcome> {
  const here = payload.issue.number;
  const labelName = deps.labelName ?? DEFAULT_STORY_LABEL;
  if (!payload.issue.pull_request) {
    if (!hasLabel(payload.issue.labels, labelName)) {
      await reply(scope, here, renderNotAStory("issue", labelName));
      return { action: "replied", reason: "not-a-story" };
    }
    const issue: StoryIssue = {
      number: here,
      title: payload.issue.title,
      body: payload.issue.body,
      updatedAt: payload.issue.updated_at,
      labels: payload.issue.labels,
    };
    return readmitBlockedStory(scope, issue, undefined, here, author, deps, acceptIntegrity);
  }
  const { data: pull } = await (await scope.octokit()).rest.pulls.get({ owner: scope.owner, repo: scope.repo, pull_number: here });
  // A fork can name its branch harness/story-N too; only the repository's own branch is a story's.
  const storyNumber = pull.head.repo?.id === scope.repository.id ? storyIssueFromBranch(pull.head.ref) : undefined;
  if (storyNumber === undefined) {
    // Stryker disable next-line StringLiteral: renderNotAStory tells "issue" from anything else
    await reply(scope, here, renderNotAStory("pull request", labelName));
    return { action: "replied", reason: "not-a-story" };
  }
  const issue = await loadStoryIssue(scope, storyNumber);
  return readmitBlockedStory(scope, issue, here, here, author, deps, acceptIntegrity);
}

/** `/harness revise <text>` on a story's open pull request: a revision round with the writer's text, frozen. */
async function reviseFromComment(
  scope: TriggerScope,
  payload: CommentPayload,
  text: string,
  commentId: number,
  author: string,
  deps: TriggerDeps,
): Promise<TriggerOutcome> {
  const here = payload.issue.number;
  const labelName = deps.labelName ?? DEFAULT_STORY_LABEL;
  const pull = payload.issue.pull_request ? await currentPull(await scope.octokit(), scope, here) : undefined;
  const storyNumber = pull ? storyOfPull(pull, scope.repository.id) : undefined;
  if (!pull || storyNumber === undefined) {
    await reply(scope, here, renderNotAStory(payload.issue.pull_request ? "pull request" : "issue", labelName));
    return { action: "replied", reason: "not-a-story" };
  }
  if (text === "" || pull.state !== "open") {
    await reply(scope, here, renderReviseNeedsText(pull.state !== "open"));
    return { action: "replied", reason: "not-a-story" };
  }
  return enqueueRevision(scope, storyNumber, here, { triggers: [{ kind: "command", by: author, id: commentId, body: text, comments: [] }] }, author, deps);
}
