import {
  emptySnapshot,
  reduceSnapshot,
  type FailureClass,
  type HistoryEvent,
  type Reporter,
  type RunStartedEvent,
  type StorySnapshot,
} from "../pipeline/index.js";
import type { WaitingPush } from "../github/report/index.js";

/** What the runner needs of a reporter beyond the port: the story's delivery, reported. */
export interface StoryReporter extends Reporter {
  /** Moves the reports to the new head commit after a push. */
  setHeadSha(sha: string): Promise<void>;
  /**
   * Says on the story's check run, on the head it reports on now, that the push waits (GitHub
   * could not take it yet): sent ahead of the push, replaced once it went through.
   */
  showPushWaiting(push: WaitingPush): Promise<void>;
  /** Marks the draft pull request ready for review (after the reports before it). */
  markReadyForReview(pullNodeId: string): Promise<void>;
  /**
   * Lets later writes resolve once they are durably recorded, delivered in the background (see
   * `GitHubReporter.handOff`); resolves false when the reporter cannot (its outbox is in memory).
   */
  handOff(): Promise<boolean>;
}

/**
 * Passes events on to the story's reporter while remembering the last snapshot and whether the
 * story's end (completed or blocked) was reported, so the runner's `finally` can report an end
 * the pipeline never reached (a crash, an invalid configuration, an interruption).
 */
export class TrackingReporter implements StoryReporter {
  snapshot: StorySnapshot = emptySnapshot();
  /** True once the story's end reached the reporter. */
  ended = false;
  /** Called once, after the first event reached the reporter. */
  afterFirstEvent: (() => void) | undefined;
  /**
   * The story's end, held back until the runner delivered the work (pushed it): a conclusion
   * must not claim what was not delivered. Released by {@link releaseEnd}, replaced by {@link block}.
   */
  private held: { event: HistoryEvent; snapshot: StorySnapshot } | undefined;

  constructor(
    private readonly inner: StoryReporter,
    private readonly onFailure: (error: unknown) => void,
    private readonly holdEnd = false,
  ) {}

  /** The end the pipeline reported and the runner holds back, if any. */
  get heldEnd(): HistoryEvent | undefined {
    return this.held?.event;
  }

  /** Passes the held end on (the work was delivered). */
  async releaseEnd(): Promise<void> {
    const held = this.held;
    this.held = undefined;
    if (held) await this.forward(held.event, held.snapshot);
  }

  async onEvent(event: HistoryEvent, snapshot: StorySnapshot): Promise<void> {
    const end = event.kind === "story.completed" || event.kind === "story.blocked";
    if (end && this.holdEnd && !this.ended) {
      this.held = { event, snapshot };
      return;
    }
    await this.forward(event, snapshot);
  }

  private async forward(event: HistoryEvent, snapshot: StorySnapshot): Promise<void> {
    this.snapshot = snapshot;
    if (event.kind === "story.completed" || event.kind === "story.blocked") this.ended = true;
    try {
      await this.inner.onEvent(event, snapshot);
    } catch (error) {
      // A reporter must not stop the story.
      this.onFailure(error);
    }
    const first = this.afterFirstEvent;
    this.afterFirstEvent = undefined;
    first?.();
  }

  setHeadSha(sha: string): Promise<void> {
    return this.inner.setHeadSha(sha);
  }

  async showPushWaiting(push: WaitingPush): Promise<void> {
    try {
      await this.inner.showPushWaiting(push);
    } catch (error) {
      // Saying that the push waits must not stop its delivery.
      this.onFailure(error);
    }
  }

  markReadyForReview(pullNodeId: string): Promise<void> {
    return this.inner.markReadyForReview(pullNodeId);
  }

  handOff(): Promise<boolean> {
    return this.inner.handOff();
  }

  /** Emits one event, reducing the snapshot itself (for events the runner originates). */
  emit(event: HistoryEvent): Promise<void> {
    return this.forward(event, reduceSnapshot(this.snapshot, event));
  }

  /**
   * Reports the story blocked with `failureClass`. When the pipeline never started, a
   * `run.started` comes first so the check runs and the status comment have a story to show.
   */
  async block(args: { failureClass: FailureClass; detail: string; start?: RunStartedEvent }): Promise<void> {
    // A held end is replaced: the story did not end the way the pipeline reported.
    this.held = undefined;
    const at = new Date().toISOString();
    if (this.snapshot.runId === "" && args.start) await this.emit(args.start);
    // A story stopped outside the pipeline names no task: the runner never invents one.
    await this.emit({ kind: "story.blocked", at, failureClass: args.failureClass, detail: args.detail });
  }
}
