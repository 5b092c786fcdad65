/**
 * The runner's task slots, shared by every story it runs: a task runs in a slot, so the runner
 * never runs more tasks at once than it has slots, whatever each story's plan asks for. A
 * story's job holds one slot while it runs (its own: its planner, its tasks one at a time, its
 * integration); a plan's further tasks of a wave each take a slot only while one is free,
 * so a story gets more side by side when the runner is idle and fewer when other stories run.
 */

/** A slot taken; released once (later calls do nothing). */
export interface SlotLease {
  release(): void;
}

export class TaskSlots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly listeners = new Set<() => void>();

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 0) throw new RangeError(`a runner's task slots must be a whole number ≥ 0, not ${size}`);
  }

  /** Slots nobody holds. */
  get free(): number {
    return Math.max(0, this.size - this.used);
  }

  /** Slots held now. */
  get inUse(): number {
    return this.used;
  }

  /** Takes a slot, waiting (first come, first served) while none is free; rejects when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<SlotLease> {
    if (this.free > 0 && this.waiting.length === 0) return Promise.resolve(this.take());
    return new Promise<SlotLease>((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener("abort", abort);
        resolve(this.take());
      };
      const abort = (): void => {
        const at = this.waiting.indexOf(grant);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error("stopped while waiting for a task slot"));
      };
      if (signal?.aborted) return abort();
      signal?.addEventListener("abort", abort, { once: true });
      this.waiting.push(grant);
    });
  }

  /** Takes a free slot at once, or none: a slot someone waits for goes to them first. */
  tryAcquire(): SlotLease | undefined {
    return this.free > 0 && this.waiting.length === 0 ? this.take() : undefined;
  }

  /** Calls `listener` after every release (a chance to take a slot); returns the unsubscribe. */
  onRelease(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private take(): SlotLease {
    this.used += 1;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.used -= 1;
        this.waiting.shift()?.();
        for (const listener of [...this.listeners]) listener();
      },
    };
  }
}

/**
 * Runs `work` over `items`, at most `limit` at once; results in the order of `items`. The first
 * item at a time runs in the caller's own slot; every further one at once needs a slot of
 * `slots`, taken when free (and given back when its item ends). Waiting never blocks the
 * caller's own slot: with no slot free, the items run one after another.
 */
export function inSlots<T, R>(items: readonly T[], limit: number, slots: TaskSlots, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let running = 0;
  // The caller's own slot, which needs no lease.
  let ownBusy = false;
  let failure: { error: unknown } | undefined;
  return new Promise<R[]>((resolve, reject) => {
    const pump = (): void => {
      while (!failure && next < items.length && running < Math.max(1, limit)) {
        const own = !ownBusy;
        const lease = own ? undefined : slots.tryAcquire();
        if (!own && !lease) break;
        if (own) ownBusy = true;
        const index = next;
        next += 1;
        running += 1;
        void work(items[index] as T)
          .then(
            (result) => void (results[index] = result),
            (error: unknown) => void (failure ??= { error }),
          )
          .finally(() => {
            running -= 1;
            if (own) ownBusy = false;
            lease?.release();
            pump();
          });
      }
      if (running > 0 || (next < items.length && !failure)) return;
      unsubscribe();
      if (failure) reject(failure.error);
      else resolve(results);
    };
    const unsubscribe = slots.onRelease(pump);
    pump();
  });
}
