/** A real queue whose enqueue waits at a gate the test opens; what arrived and each outcome are kept. */
import type { EmbeddedQueue, EnqueueOutcome, JobWorker, QueueListeners, StoryJob, StoryQueue } from "../../src/queue/index.js";

export class GatedQueue implements StoryQueue {
  /** Jobs asked for, in order, whether or not the gate is open yet. */
  readonly arrived: StoryJob[] = [];
  readonly outcomes: Array<{ issue: number; outcome: EnqueueOutcome }> = [];
  private open: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => {
    this.open = resolve;
  });

  constructor(private readonly inner: EmbeddedQueue) {}

  get concurrency(): number {
    return this.inner.concurrency;
  }
  /** Lets every enqueue waiting at the gate, and every later one, go on. */
  release(): void {
    this.open();
  }
  async enqueue(job: StoryJob): Promise<EnqueueOutcome> {
    this.arrived.push(job);
    await this.gate;
    const outcome = await this.inner.enqueue(job);
    this.outcomes.push({ issue: job.issue.number, outcome });
    return outcome;
  }
  isActive(key: string): Promise<boolean> {
    return this.inner.isActive(key);
  }
  start(worker: JobWorker): void {
    this.inner.start(worker);
  }
  idle(): Promise<void> {
    return this.inner.idle();
  }
  close(options?: { abortRunning?: boolean }): Promise<void> {
    return this.inner.close(options);
  }
  snapshot(): ReturnType<EmbeddedQueue["snapshot"]> {
    return this.inner.snapshot();
  }
  listen(listeners: QueueListeners): void {
    this.inner.listen?.(listeners);
  }
}
