/**
 * Waits for a condition without timing anything: polls `probe` until it gives a value (not
 * `undefined`), and fails naming `what` only after a generous deadline that guards against a
 * hang on a loaded machine.
 */
export async function eventually<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
