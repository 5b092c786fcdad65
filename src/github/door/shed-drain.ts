/**
 * The body of a shed delivery: answered 503 before it was read, it is still read as it arrives
 * (so the sender can finish and read the answer), hashed on the way and never kept. Its id is
 * worth keeping only when the signature verifies: only GitHub, with the webhook secret, can
 * sign, so a sender without it cannot put ids in the shed list.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * Reads the rest of `request` into an HMAC-SHA256 with `secret`, for at most `withinMs` (then
 * the connection is cut) and `maxBytes` (then the rest is only discarded); resolves true when
 * the whole body arrived and matches `signature` (`sha256=<hex>`). Never rejects.
 */
export function drainVerifying(request: IncomingMessage, secret: string, signature: string, maxBytes: number, withinMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const given = signature.startsWith("sha256=") ? Buffer.from(signature.slice("sha256=".length), "hex") : Buffer.alloc(0);
    const hmac = createHmac("sha256", secret);
    let bytes = 0;
    let settled = false;
    const settle = (verified: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(cut);
      resolve(verified);
    };
    const cut = setTimeout(() => {
      request.destroy();
      settle(false);
    }, withinMs);
    cut.unref();
    request.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= maxBytes) hmac.update(chunk);
    });
    request.once("end", () => {
      const expected = hmac.digest();
      settle(bytes <= maxBytes && given.length === expected.length && timingSafeEqual(given, expected));
    });
    request.once("error", () => settle(false));
    request.once("close", () => settle(false));
    if (request.complete) settle(false); // read already (cannot be for a shed request: nothing reads it first)
  });
}
