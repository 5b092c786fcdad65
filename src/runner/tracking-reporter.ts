import { emptySnapshot, reduceSnapshot, type FailureClass, type HistoryEvent, type Reporter, type StorySnapshot } from "../pipeline/index.js";

/** What the runner needs of a reporter beyond the port: moving to the new head commit after a push. */
export interface StoryReporter extends Reporter {
  setHeadSha(sha: string): Promise<void>;
}

/**
 * Passes events on to the story's reporter while remembering the last snapshot and whether the
 * story's end (completed or blocked) was reported, so the runner's `finally` can report an end
 * the pipeline never reached (a crash, an invalid configuration, an interruption).
 */
export class TrackingReporter implements Reporter {
  snapshot: StorySnapshot = emptySnapshot();
  ended = false;
  /** Called once, after the first event reached the reporter. */
  afterFirstEvent: (() => void) | undefined;

  constructor(private readonly inner: Reporter, private readonly onFailure: (error: unknown) => void) {}

  async onEvent(event: HistoryEvent, snapshot: StorySnapshot): Promise<void> {
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

  /** Emits one event, reducing the snapshot itself (for events the runner originates). */
  emit(event: HistoryEvent): Promise<void> {
    return this.onEvent(event, reduceSnapshot(this.snapshot, event));
  }

  /**
   * Reports the story blocked with `failureClass`. When the pipeline never started, a
   * `run.started` comes first so the check runs and the status comment have a story to show.
   */
  async block(args: { failureClass: FailureClass; detail: string; start?: Extract<HistoryEvent, { kind: "run.started" }> }): Promise<void> {
    const at = new Date().toISOString();
    if (this.snapshot.runId === "" && args.start) await this.emit(args.start);
    // A story stopped outside the pipeline names no task: the runner never invents one.
    await this.emit({ kind: "story.blocked", at, failureClass: args.failureClass, detail: args.detail });
  }
}
