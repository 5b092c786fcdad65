import { Worker } from "bullmq";

/**
 * BullMQ's worker, whose waits end when it closes. BullMQ ends only a rate limit's wait at close:
 * the wait before it tries again after a lost connection (`runRetryDelay`, 15 s) outlived `close`,
 * and its timer held the process that long after (Jest: "did not exit one second after the test run").
 */
/** The controller type BullMQ's `delay` takes (a polyfill's, alike at run time to Node's own). */
type DelayController = NonNullable<Parameters<Worker["delay"]>[1]>;

export class ClosingWorker extends Worker {
  private readonly ending = new AbortController();

  override async delay(milliseconds?: number, abortController?: DelayController): Promise<void> {
    if (this.ending.signal.aborted || abortController?.signal.aborted) return;
    const either = new AbortController();
    const end = (): void => either.abort();
    this.ending.signal.addEventListener("abort", end, { once: true });
    abortController?.signal.addEventListener("abort", end, { once: true });
    try {
      await super.delay(milliseconds, either as unknown as DelayController);
    } finally {
      this.ending.signal.removeEventListener("abort", end);
      abortController?.signal.removeEventListener("abort", end);
    }
  }

  override async close(force = false): Promise<void> {
    this.ending.abort();
    return super.close(force);
  }
}
