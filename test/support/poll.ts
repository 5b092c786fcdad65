/**
 * The one poll of the test suite. Tests wait for a condition, never for a time: each form polls
 * until what it waits for is there, and fails naming `what` only after a deadline that guards
 * against a hang on a loaded machine (it measures nothing).
 */

/** How long a poll waits before it fails, unless told: a hang guard, generous for a loaded machine. */
export const HANG_GUARD_MS = 120_000;

/** How often a poll looks again. */
const EVERY_MS = 20;

/**
 * Polls `probe` until it gives a value (not `undefined`) and returns it; fails naming `what`
 * after `timeoutMs`. An error `probe` throws ends the wait at once (a probe may refuse to wait on,
 * for example when the process it watches has exited).
 */
export async function eventually<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = HANG_GUARD_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
  }
}

/** Polls `condition` until it holds; fails naming `what` after `timeoutMs` (see {@link eventually}). */
export async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = HANG_GUARD_MS): Promise<void> {
  await eventually(what, async () => ((await condition()) ? true : undefined), timeoutMs);
}
