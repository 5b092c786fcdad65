/** The runner's side of a revision round: deciding it against the recorded rounds, and replying on the threads it addressed. */
import type { RevisionRow } from "../github/report/render/index.js";
import { noteUnderRounds, readRounds, replyOnThread, type PullPlace, type StoryGitHub } from "../github/story/index.js";
import { errorDetails, type GitHubLog } from "../github/index.js";
import type { HarnessConfig, RevisionPrompt, StoryOutcome, Workflow } from "../pipeline/index.js";
import type { StoryJob } from "../queue/index.js";
import { agentReplies, ciSignatures, decideRound, renderThreadReply, revisionPrompt, triggerLabel } from "./revision.js";
import type { StoryPull } from "./story-start.js";

/** A round that starts: its prompt and the rows of the Revisions table, this round last. */
export interface RevisionRun {
  prompt: RevisionPrompt;
  rows: RevisionRow[];
}

function octokitOf(github: StoryGitHub, pull: StoryPull, job: StoryJob, log: GitHubLog): ReturnType<StoryGitHub["reporterTarget"]>["octokit"] {
  return github.reporterTarget({ pullNumber: pull.pullNumber, issueNumber: job.issue.number, headSha: pull.headSha, log }).octokit;
}

/** The rounds the status comment records (none when it cannot be read: a lost table must not block the story). */
export async function recordedRounds(github: StoryGitHub, pullNumber: number, botLogin: string | undefined, log: GitHubLog): Promise<RevisionRow[]> {
  try {
    const target = github.reporterTarget({ pullNumber, issueNumber: pullNumber, headSha: "", log });
    return (await readRounds(target.octokit, { owner: target.owner, repo: target.repo, pullNumber }, botLogin)).rows;
  } catch (error) {
    log.warn({ err: errorDetails(error) }, "could not read the story's revision rounds");
    return [];
  }
}

/**
 * Decides the round of a `revise` job. When it may not start (`iterate` off for its trigger,
 * `iterate.max_rounds` spent, the same CI failure right after a fix round) the status comment
 * says why under its Revisions table and undefined is returned: nothing starts.
 */
export async function startRevision(args: {
  github: StoryGitHub;
  job: StoryJob;
  pull: StoryPull;
  config: HarnessConfig;
  botLogin: string | undefined;
  log: GitHubLog;
}): Promise<RevisionRun | undefined> {
  const { github, job, pull, log } = args;
  const request = job.revision;
  if (!request) return undefined;
  const octokit = octokitOf(github, pull, job, log);
  const where = { owner: job.repository.owner, repo: job.repository.name, pullNumber: pull.pullNumber };
  const recorded = await readRounds(octokit, where, args.botLogin);
  const refusal = decideRound(args.config, recorded.rows, request);
  if (refusal) {
    log.info({ story: job.storyKey, reason: refusal.reason }, "a revision trigger started nothing");
    await noteUnderRounds(octokit, where, recorded, refusal.note);
    return undefined;
  }
  const signatures = ciSignatures(request);
  const row: RevisionRow = { round: recorded.rows.length + 1, trigger: triggerLabel(request), ...(signatures.length > 0 ? { signatures } : {}) };
  return { prompt: revisionPrompt(request), rows: [...recorded.rows, row] };
}

/** Replies on each review thread the round was asked to address, in the agent's words when it left any. */
export async function replyOnThreads(args: {
  github: StoryGitHub;
  job: StoryJob;
  pull: StoryPull;
  outcome: StoryOutcome;
  workflow: Workflow;
  log: GitHubLog;
}): Promise<void> {
  const { github, job, pull, outcome, log } = args;
  const threads = (job.revision?.triggers ?? []).flatMap((trigger) => (trigger.kind === "review" ? trigger.comments : []));
  if (threads.length === 0) return;
  const octokit = octokitOf(github, pull, job, log);
  const where: PullPlace = { owner: job.repository.owner, repo: job.repository.name, pullNumber: pull.pullNumber };
  const words = agentReplies(outcome.runDir, args.workflow.retryStage);
  for (const thread of threads) {
    try {
      // The story's tokens and the App's secrets out of the agent's words first; the token patterns again in the renderer.
      const agentWords = words.get(thread.id);
      await replyOnThread(octokit, where, thread.id, renderThreadReply(agentWords !== undefined ? github.redact(agentWords) : undefined, outcome, []));
    } catch (error) {
      // A thread deleted meanwhile loses its reply; the others still get theirs.
      log.warn({ err: errorDetails(error), comment: thread.id }, "could not reply on a review thread");
    }
  }
}
