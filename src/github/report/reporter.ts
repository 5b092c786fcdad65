/**
 * The GitHub reporter: turns the pipeline's events into four check runs on the pull request's
 * head commit, one status comment edited in place, and the `harness:blocked` label. Every write
 * goes through the outbox, which records it before it is attempted and retries it until GitHub
 * accepts it; the reporter never throws out of `onEvent`: a story must not fail because GitHub
 * could not be told about it (yet).
 */
import type { ProbotOctokit } from "probot";
import type { HistoryEvent, Reporter, StorySnapshot } from "../../pipeline/index.js";
import { CHECK_NAMES, planChecks, type CheckName, type PlannedCheck } from "./check-plan.js";
import { githubDelivery } from "./deliver.js";
import { BLOCKED_LABEL } from "../index.js";
import { errorDetails, type GitHubLog } from "../index.js";
import { Outbox, type OutboxStory, type OutboxWrite } from "../../outbox/index.js";
import { renderMovedCheck, renderPushWaitingCheck, type WaitingPush } from "./render/index.js";
import { renderStatusComment } from "./render/index.js";
import type { RenderOptions } from "./render/index.js";
import { storyExternalId } from "../index.js";

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
  /** The story's revision rounds (this run's last, when it is one), for the status comment's Revisions table. */
  revisions?: RenderOptions["revisions"];
  /** The App's bot login (`<slug>[bot]`), to recognise its own status comment; any bot when absent. */
  botLogin?: string;
  /** The App's durable outbox; without one, writes are kept in memory and tried once per event. */
  outbox?: Outbox | Promise<Outbox>;
  /** The installation the outbox authenticates as (required with `outbox`). */
  installationId?: number;
}

interface PostedCheck {
  slot: string;
  headSha: string;
  planned: PlannedCheck;
  fingerprint: string;
  startedAt?: string;
}

/** What a check run on a head the story left says. */
function movedTo(sha: string): Pick<Extract<OutboxWrite, { kind: "check" }>, "status" | "conclusion" | "completedAt" | "output" | "actions"> {
  return { status: "completed", conclusion: "neutral", completedAt: new Date().toISOString(), output: renderMovedCheck(sha), actions: [] };
}

const fingerprint = (check: PlannedCheck): string => JSON.stringify([check.status, check.conclusion, check.output, check.actions]);

/**
 * Reports one story's run on its pull request. One instance per run: a re-admitted story gets
 * a new reporter, which creates fresh check runs and finds the status comment by its marker.
 */
export class GitHubReporter implements Reporter {
  private readonly posted = new Map<CheckName, PostedCheck>();
  private readonly story: OutboxStory;
  private readonly outbox: Promise<Outbox>;
  /** Distinguishes this run's check-run slots from an earlier run's in the outbox. */
  private readonly run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  private slots = 0;
  private headSha: string;
  private lastBody: string | undefined;
  /** Set by {@link handOff}: writes are recorded on disk and delivered in the background, not awaited. */
  private handedOff = false;
  // Events and head changes are applied one at a time, in order.
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: GitHubReporterOptions) {
    this.headSha = options.headSha;
    this.story = {
      installationId: options.installationId ?? 0,
      owner: options.owner,
      repo: options.repo,
      issueNumber: options.issueNumber,
      pullNumber: options.pullNumber,
    };
    this.outbox = options.outbox ? Promise.resolve(options.outbox) : Outbox.open({ deliver: githubDelivery(async () => options.octokit), log: options.log });
  }

  /** Applies one event; resolves once its writes are recorded and tried (a refusal is retried later), or only recorded once handed off. */
  onEvent(event: HistoryEvent, snapshot: StorySnapshot): Promise<void> {
    return this.serialize(`event ${event.kind}`, async () => {
      const outbox = await this.outbox;
      if (event.kind === "run.started" && event.readmission) await outbox.put(this.story, "label:blocked", this.blockedLabel(false));
      // A block's label goes first: the Retry button and the comment that offer a re-admission show only once
      // the label a re-admission asks for is there (the reports after it go out in order).
      const blocked = event.kind === "story.blocked";
      if (blocked) await outbox.put(this.story, "label:blocked", this.blockedLabel(true));
      const place = { last: blocked };
      for (const check of this.planChecks(snapshot)) await outbox.put(this.story, check.slot, this.checkWrite(check), place);
      const body = renderStatusComment(snapshot, this.renderOptions());
      if (body !== this.lastBody) {
        const comment: OutboxWrite = {
          kind: "status-comment",
          issueNumber: this.options.pullNumber,
          body,
          ...(this.options.botLogin ? { botLogin: this.options.botLogin } : {}),
        };
        await outbox.put(this.story, "status-comment", comment, place);
        this.lastBody = body;
      }
      await this.deliver(outbox);
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
      const outbox = await this.outbox;
      // The story's own check run goes last: once it shows on the new head, every other check run is there too.
      const posted = [...this.posted];
      const order = [...posted.filter(([name]) => name !== CHECK_NAMES.story), ...posted.filter(([name]) => name === CHECK_NAMES.story)];
      for (const [name, check] of order) {
        const moved: PostedCheck = { ...check, slot: this.newSlot(name), headSha: sha };
        this.posted.set(name, moved);
        await outbox.put(this.story, moved.slot, this.checkWrite(moved));
        // The earlier head's unfinished check run is closed, saying where the story went on; none stays in progress.
        if (check.planned.status !== "completed") await outbox.put(this.story, check.slot, { ...this.checkWrite(check), ...movedTo(sha) });
      }
      await this.deliver(outbox);
    });
  }

  /**
   * Says on the story's check run, where it is now (before {@link setHeadSha} moves it), that the
   * push of `push.sha` waits: a line above what it showed. It goes out ahead of the push (the
   * outbox holds every other report behind it) and is tried now, whether or not the reporter
   * handed off, so that a head change recorded next cannot replace it before GitHub saw it. The
   * check run's next state (closed as moved, once the push went through) replaces the line.
   */
  showPushWaiting(push: WaitingPush): Promise<void> {
    return this.serialize("push waiting", async () => {
      const check = this.posted.get(CHECK_NAMES.story);
      if (!check || check.planned.status === "completed") return;
      const outbox = await this.outbox;
      const output = renderPushWaitingCheck(check.planned.output, push, this.renderOptions().secrets);
      // What is posted stays the plan's state: the next change of the check run drops the line.
      await outbox.put(this.story, check.slot, this.checkWrite({ ...check, planned: { ...check.planned, output } }), { beforePush: true });
      await outbox.flush(this.story);
    });
  }

  /** Marks the story's draft pull request ready for review, through the outbox. */
  markReadyForReview(pullNodeId: string): Promise<void> {
    return this.serialize("ready for review", async () => {
      const outbox = await this.outbox;
      await outbox.put(this.story, "ready-for-review", { kind: "ready-for-review", pullNodeId });
      await this.deliver(outbox);
    });
  }

  /**
   * From now on, each write resolves once it is recorded in the outbox, and is delivered in the
   * background, in order (reports behind a waiting push stay behind it): what a job asks once its
   * work is pushed, so it need not wait for GitHub to take its end reports. Only a durable outbox
   * takes them over (one on disk, retried across restarts); with one in memory nothing would carry
   * them on after the job, so writes are still awaited. Resolves true when the reporter handed off.
   */
  async handOff(): Promise<boolean> {
    await this.serialize("hand-off", async () => {
      this.handedOff = (await this.outbox).durable;
    });
    return this.handedOff;
  }

  /** Waits until the writes so far are applied to the outbox (not necessarily delivered). */
  settled(): Promise<void> {
    return this.queue;
  }

  /** The check run ids currently shown, by name, as far as GitHub answered (for tests and logs). */
  checkRunIds(): Record<string, number> {
    const ids: Record<string, number> = {};
    if (!this.syncOutbox) return ids;
    for (const [name, check] of this.posted) {
      const id = this.syncOutbox.result(this.story, check.slot)?.checkRunId;
      if (id !== undefined) ids[name] = id;
    }
    return ids;
  }

  private syncOutbox: Outbox | undefined;

  /** Delivers what was just recorded: awaited, or in the background once handed off. */
  private async deliver(outbox: Outbox): Promise<void> {
    if (this.handedOff) outbox.deliverSoon(this.story);
    else await outbox.flush(this.story);
  }

  private serialize(what: string, work: () => Promise<void>): Promise<void> {
    const next = this.queue
      .then(async () => {
        this.syncOutbox = await this.outbox;
        await work();
      })
      .catch((error: unknown) => this.options.log.warn({ err: errorDetails(error), what }, "GitHub reporting failed"));
    this.queue = next;
    return next;
  }

  private newSlot(name: CheckName): string {
    this.slots += 1;
    return `check:${name}:${this.run}:${this.slots}`;
  }

  private renderOptions(): RenderOptions {
    const { secrets = [], appSecrets = [], revision, revisions } = this.options;
    // The outbox's own installation tokens too: a suite may print any token it can find.
    return {
      secrets: [...appSecrets, ...secrets, ...(this.syncOutbox?.secretsSeen() ?? [])],
      ...(revision ? { revision } : {}),
      ...(revisions ? { revisions } : {}),
    };
  }

  /** Decides, per check, whether the plan updates the posted check run or needs a new one; returns the changed ones. */
  private planChecks(snapshot: StorySnapshot): PostedCheck[] {
    const now = new Date().toISOString();
    const changed: PostedCheck[] = [];
    for (const planned of planChecks(snapshot, this.renderOptions())) {
      const posted = this.posted.get(planned.name);
      const newAttempt = posted !== undefined && posted.planned.status === "completed" && planned.attempt > posted.planned.attempt;
      let next: PostedCheck | undefined;
      if (!posted || newAttempt) {
        next = {
          slot: this.newSlot(planned.name),
          headSha: this.headSha,
          planned,
          fingerprint: fingerprint(planned),
          ...(planned.status !== "queued" ? { startedAt: now } : {}),
        };
      } else if (posted.fingerprint !== fingerprint(planned)) {
        const startedAt = posted.startedAt ?? (planned.status !== "queued" ? now : undefined);
        next = { ...posted, planned, fingerprint: fingerprint(planned), ...(startedAt ? { startedAt } : {}) };
      }
      if (next) {
        this.posted.set(planned.name, next);
        changed.push(next);
      }
    }
    return changed;
  }

  private checkWrite(check: PostedCheck): OutboxWrite {
    const { planned } = check;
    return {
      kind: "check",
      name: planned.name,
      headSha: check.headSha,
      externalId: storyExternalId(this.options.issueNumber),
      status: planned.status,
      ...(planned.status === "completed" ? { conclusion: planned.conclusion ?? "neutral", completedAt: new Date().toISOString() } : {}),
      ...(check.startedAt ? { startedAt: check.startedAt } : {}),
      output: planned.output,
      ...(planned.actions ? { actions: planned.actions } : {}),
    };
  }

  private blockedLabel(present: boolean): OutboxWrite {
    return { kind: "label", label: BLOCKED_LABEL, numbers: [this.options.issueNumber, this.options.pullNumber], present };
  }
}
