/**
 * The GitHub reporter: turns the pipeline's events into four check runs on the pull request's
 * head commit, one status comment edited in place, and the `harness:blocked` label. It never
 * throws out of `onEvent`: a story must not fail because GitHub could not be told about it.
 */
import type { ProbotOctokit } from "probot";
import type { HistoryEvent, Reporter, StorySnapshot } from "../pipeline/index.js";
import { planChecks, type CheckName, type PlannedCheck } from "./check-plan.js";
import { addLabel, BLOCKED_LABEL, removeLabel } from "./labels.js";
import { errorDetails, type GitHubLog } from "./log.js";
import type { RenderOptions } from "./render/types.js";
import { StatusComment } from "./status-comment.js";
import { storyExternalId } from "./story-lookup.js";

export interface GitHubReporterOptions {
  octokit: ProbotOctokit;
  owner: string;
  repo: string;
  pullNumber: number;
  issueNumber: number;
  headSha: string;
  log: GitHubLog;
  /**
   * Secret values removed from everything posted, beyond the token patterns: the installation
   * tokens of the story. Read on every post, so a list the caller keeps appending to (a token
   * refreshed mid-story) is redacted as it stands, not as it stood when the reporter was made.
   */
  secrets?: readonly string[];
  /** The App's own secrets (webhook secret, private key), removed as well. */
  appSecrets?: readonly string[];
  /** The admitted revision of the story's issue (`updated_at`), named in the status comment. */
  revision?: string;
  /** The App's bot login (`<slug>[bot]`), to recognise its own status comment; any bot when absent. */
  botLogin?: string;
}

interface PostedCheck {
  id: number;
  headSha: string;
  planned: PlannedCheck;
  fingerprint: string;
}

const fingerprint = (check: PlannedCheck): string => JSON.stringify([check.status, check.conclusion, check.output, check.actions]);

/**
 * Reports one story's run on its pull request. One instance per run: a re-admitted story gets
 * a new reporter, which creates fresh check runs and finds the status comment by its marker.
 */
export class GitHubReporter implements Reporter {
  private readonly posted = new Map<CheckName, PostedCheck>();
  private readonly comment: StatusComment;
  private headSha: string;
  // Events and head changes are applied one at a time, in order.
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: GitHubReporterOptions) {
    this.headSha = options.headSha;
    this.comment = new StatusComment({ ...options, renderOptions: () => this.renderOptions() });
  }

  /** Applies one event; resolves when GitHub has been updated (or the failure logged). */
  onEvent(event: HistoryEvent, snapshot: StorySnapshot): Promise<void> {
    return this.serialize(`event ${event.kind}`, async () => {
      if (event.kind === "run.started" && event.readmission) await this.guard("remove blocked label", () => this.labelBlocked(false));
      await this.syncChecks(snapshot);
      await this.guard("status comment", () => this.comment.show(snapshot));
      if (event.kind === "story.blocked") await this.guard("add blocked label", () => this.labelBlocked(true));
    });
  }

  /**
   * Moves reporting to a new head commit (the runner pushed): the current state of every check
   * run is posted again on `sha`, and later updates go there.
   */
  setHeadSha(sha: string): Promise<void> {
    return this.serialize("head change", async () => {
      if (sha === this.headSha) return;
      this.headSha = sha;
      const current = [...this.posted.values()];
      for (const check of current) await this.guard(`repost ${check.planned.name}`, () => this.create(check.planned));
    });
  }

  /** The check run ids currently shown, by name (for tests and logs). */
  checkRunIds(): Record<string, number> {
    return Object.fromEntries([...this.posted.entries()].map(([name, check]) => [name, check.id]));
  }

  private serialize(what: string, work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work).catch((error: unknown) => this.options.log.warn({ err: errorDetails(error), what }, "GitHub reporting failed"));
    this.queue = next;
    return next;
  }

  private async guard(what: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.options.log.warn({ err: errorDetails(error), what }, "GitHub reporting failed");
    }
  }

  private renderOptions(): RenderOptions {
    const { secrets = [], appSecrets = [], revision } = this.options;
    return { secrets: [...appSecrets, ...secrets], ...(revision ? { revision } : {}) };
  }

  private async syncChecks(snapshot: StorySnapshot): Promise<void> {
    for (const planned of planChecks(snapshot, this.renderOptions())) {
      const posted = this.posted.get(planned.name);
      const newAttempt = posted !== undefined && posted.planned.status === "completed" && planned.attempt > posted.planned.attempt;
      if (!posted || newAttempt) await this.guard(`create ${planned.name}`, () => this.create(planned));
      else if (posted.fingerprint !== fingerprint(planned)) await this.guard(`update ${planned.name}`, () => this.update(posted, planned));
    }
  }

  private async create(planned: PlannedCheck): Promise<void> {
    const { octokit, owner, repo, issueNumber } = this.options;
    const now = new Date().toISOString();
    const { data } = await octokit.rest.checks.create({
      owner,
      repo,
      name: planned.name,
      head_sha: this.headSha,
      external_id: storyExternalId(issueNumber),
      status: planned.status,
      ...(planned.status !== "queued" ? { started_at: now } : {}),
      ...(planned.status === "completed" ? { conclusion: planned.conclusion ?? "neutral", completed_at: now } : {}),
      output: planned.output,
      ...(planned.actions ? { actions: planned.actions } : {}),
    });
    this.posted.set(planned.name, { id: data.id, headSha: this.headSha, planned, fingerprint: fingerprint(planned) });
  }

  private async update(posted: PostedCheck, planned: PlannedCheck): Promise<void> {
    const { octokit, owner, repo } = this.options;
    const now = new Date().toISOString();
    await octokit.rest.checks.update({
      owner,
      repo,
      check_run_id: posted.id,
      status: planned.status,
      ...(planned.status === "in_progress" && posted.planned.status === "queued" ? { started_at: now } : {}),
      ...(planned.status === "completed" ? { conclusion: planned.conclusion ?? "neutral", completed_at: now } : {}),
      output: planned.output,
      // An empty list removes a Retry button left from an earlier state.
      actions: planned.actions ?? [],
    });
    this.posted.set(planned.name, { ...posted, planned, fingerprint: fingerprint(planned) });
  }

  private async labelBlocked(blocked: boolean): Promise<void> {
    const { octokit, owner, repo, issueNumber, pullNumber } = this.options;
    if (blocked) await addLabel(octokit, owner, repo, [issueNumber, pullNumber], BLOCKED_LABEL);
    else await removeLabel(octokit, owner, repo, [issueNumber, pullNumber], BLOCKED_LABEL);
  }
}
