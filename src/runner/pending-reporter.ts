import type { HistoryEvent, StorySnapshot } from "../pipeline/index.js";
import type { WaitingPush } from "../github/report/index.js";
import type { StoryReporter } from "./tracking-reporter.js";

/**
 * A story's reporter while its draft pull request is still being opened (the reporter reports on
 * it, so it cannot be made before): the pipeline's events wait here in order and go to the
 * reporter once it is made, so the worktree and provisioning need not wait for GitHub. Once the
 * reporter is there, each call is its own (awaited as it awaits). Should the reporter never come
 * (the pull request could not be opened), the events are dropped: the runner reports that failure.
 */
export class PendingReporter implements StoryReporter {
  private ready = false;
  /** Every call so far, applied in order. */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly reporter: Promise<StoryReporter>) {
    reporter.then(
      () => {
        this.ready = true;
      },
      () => undefined,
    );
  }

  onEvent(event: HistoryEvent, snapshot: StorySnapshot): Promise<void> {
    const applied = this.then((inner) => inner.onEvent(event, snapshot));
    if (this.ready) return applied;
    applied.catch(() => undefined); // no reporter came: the runner reports why
    return Promise.resolve();
  }

  /** Resolves once every event so far reached the reporter (rejects when it never came). */
  async settled(): Promise<StoryReporter> {
    await this.chain;
    return this.reporter;
  }

  /** Resolves once every event so far reached the reporter: true, or false when the reporter never came. */
  arrived(): Promise<boolean> {
    return this.settled().then(
      () => true,
      () => false,
    );
  }

  setHeadSha(sha: string): Promise<void> {
    return this.then((inner) => inner.setHeadSha(sha));
  }

  showPushWaiting(push: WaitingPush): Promise<void> {
    return this.then((inner) => inner.showPushWaiting(push));
  }

  markReadyForReview(pullNodeId: string): Promise<void> {
    return this.then((inner) => inner.markReadyForReview(pullNodeId));
  }

  async handOff(): Promise<boolean> {
    let handedOff = false;
    await this.then(async (inner) => {
      handedOff = await inner.handOff();
    });
    return handedOff;
  }

  /** Runs `call` on the reporter after every call before it; its failure is the caller's, not the next call's. */
  private then(call: (inner: StoryReporter) => Promise<void>): Promise<void> {
    const next = this.chain.then(async () => call(await this.reporter));
    this.chain = next.catch(() => undefined);
    return next;
  }
}
