import type { Sleep } from "../../src/github/story/index.js";

/**
 * A sleep the test controls, for a runner waiting while GitHub is down: each call is recorded
 * (the wait asked for); `wake()` ends the oldest pending one; a stop of the job rejects it.
 */
export function controlledSleep(): { sleep: Sleep; waits: number[]; wake: () => void } {
  const waits: number[] = [];
  const pending: Array<() => void> = [];
  const sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      waits.push(ms);
      if (signal.aborted) return reject(signal.reason);
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      pending.push(resolve);
    });
  return { sleep, waits, wake: () => pending.shift()?.() };
}
