import { Worker } from "bullmq";

/** The controller BullMQ's `delay` takes (a polyfill's type; it reads only `signal`, Node's own at run time). */
type DelayController = NonNullable<Parameters<Worker["delay"]>[1]>;

/**
 * BullMQ's worker, whose waits end when it closes. BullMQ ends only a rate limit's wait at close:
 * the wait before it tries again after a lost connection (`runRetryDelay`, 15 s) outlived `close`,
 * and its timer held the process that long after (Jest: "did not exit one second after the test run").
 */
export class ClosingWorker extends Worker {
  private readonly ending = new AbortController();

  override async delay(milliseconds?: number, abortController?: DelayController): Promise<void> {
    const signal = AbortSignal.any([this.ending.signal, ...(abortController ? [abortController.signal as unknown as AbortSignal] : [])]);
    // An ended signal fires no more: BullMQ's wait would then last its whole time.
    if (signal.aborted) return;
    await super.delay(milliseconds, { signal } as unknown as DelayController);
  }

  override async close(force?: boolean): Promise<void> {
    this.ending.abort();
    return super.close(force);
  }
}
