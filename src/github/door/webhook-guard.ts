/**
 * The door of the webhook endpoint, in front of Probot's middleware: a body over GitHub's
 * 25 MB cap is refused from its `Content-Length` before a byte is read (or as soon as a
 * chunked one passes the cap), a body that does not arrive in time is refused, and the
 * signature is checked here — a delivery whose signature does not verify never reaches
 * Probot, whose error handlers would log the whole payload. Only the delivery id, the event
 * name and the size of a refused delivery are logged.
 *
 * Given `receive` (the App's way to its handlers), the guard also answers a verified delivery
 * itself: it parses the body once and hands the event on, as Probot's middleware would after
 * checking the signature a second time. One HMAC per delivery, not two, on the busiest path.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ShedLedger } from "./door-shed.js";
import { ClientSlots, clientKey, defaultMaxInflightPerClient } from "./door-clients.js";
import { drainVerifying } from "./shed-drain.js";
import type { GitHubLog } from "../index.js";

/** GitHub caps webhook deliveries at 25 MB. */
export const MAX_WEBHOOK_BYTES = 25 * 1024 * 1024;
/** A body must have arrived this long after its headers; GitHub waits 10 s for the whole answer. */
export const BODY_DEADLINE_MS = 4_000;

/** A Node middleware as Probot's server calls it: true when it answered the request. */
export type NodeMiddleware = (request: IncomingMessage, response: ServerResponse, next?: () => void) => Promise<boolean | void> | boolean | void;

export interface WebhookGuardOptions {
  /** The webhook path (`/api/github/webhooks` unless WEBHOOK_PATH says otherwise). */
  path: string;
  /** WEBHOOK_SECRET. */
  secret: string;
  log: GitHubLog;
  maxBytes?: number;
  bodyDeadlineMs?: number;
  /**
   * Takes a verified delivery to the App's handlers (as `probot.receive` would). Given, the guard answers
   * the delivery itself, as Probot's middleware does: 200 once the handlers are done, 202 when
   * they take longer than {@link ANSWER_WITHIN_MS}, the handlers' error otherwise.
   */
  receive?: (event: { id: string; name: string; payload: unknown }) => Promise<unknown>;
  /** With `receive`: how long the answer waits for the handlers (Probot's middleware waits 9 s). */
  answerWithinMs?: number;
  /** How long the rest of a refused body may keep arriving before the connection is cut ({@link DRAIN_MS}). */
  drainMs?: number;
  /**
   * Shedding: with `maxInflight` webhook requests in flight, or `maxInflightPerClient` from the
   * request's client ({@link clientKey}), the next is answered 503 with `Retry-After` at once,
   * before its body is read; it is counted in `ledger`, and its id kept there only once its
   * body, drained, verified.
   */
  shed?: { maxInflight: number; maxInflightPerClient?: number; ledger: ShedLedger; retryAfterSeconds?: number };
}

/** The `Retry-After` of a shed delivery. */
export const SHED_RETRY_AFTER_SECONDS = 5;

/** How long a delivery's answer waits for the handlers before it says 202, as Probot's middleware does. */
export const ANSWER_WITHIN_MS = 9_000;

type Refusal = { status: number; reason: string };

/** A request header's (first) value, "" when absent: an empty one is as good as none, as it is for Probot's middleware. */
function header(request: IncomingMessage, name: string): string {
  const value = request.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? "";
}

/** How long the rest of a refused body is drained (discarded as it arrives) before the connection is cut. */
export const DRAIN_MS = 10_000;

function answer(response: ServerResponse, refusal: Refusal, headers: Record<string, string> = {}): void {
  // Stryker disable next-line ConditionalExpression: a second answer (a handler failing after the 202) would throw inside the handlers' promise, which the answer's race holds: nothing else would tell
  if (response.headersSent) return;
  response.writeHead(refusal.status, { ...headers, "content-type": "application/json" });
  response.end(`${JSON.stringify({ error: refusal.reason })}\n`);
}

/** A plain-text answer to a delivery the handlers took (200 done, 202 still running). */
function accepted(response: ServerResponse, status: 200 | 202, text: string): void {
  // Stryker disable next-line ConditionalExpression: as in answer(): a 200 after the 202 would throw where only the race would see it
  if (response.headersSent) return;
  response.writeHead(status, { "content-type": "text/plain", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

/** A request's path without its query and trailing slashes; the common exact spelling skips URL parsing. */
function pathOf(url: string | undefined, path: string): string {
  // Stryker disable next-line ConditionalExpression: the parse below gives the same path, only slower
  if (url === path) return path.replace(/\/+$/, "");
  // Stryker disable next-line StringLiteral: a server's request always has a url; the base only makes it absolute
  return new URL(url ?? "/", "http://localhost").pathname.replace(/\/+$/, "");
}

/** `application/json`, with or without parameters, as Probot's middleware accepts it. */
const JSON_CONTENT = /^\s*application\/json\s*(?:;|$)/i;

/** The status and message of a handler's failure (Probot's `receive` rejects with an AggregateError of them). */
function failureOf(error: unknown): { status: number; reason: string } {
  const first = (error as { errors?: Iterable<unknown> } | undefined)?.errors;
  const cause = (first ? [...first][0] : error) as { name?: string; message?: string; status?: unknown } | undefined;
  const status = typeof cause?.status === "number" && cause.status >= 400 && cause.status < 600 ? cause.status : 500;
  return { status, reason: cause?.message ? `${cause.name ?? "Error"}: ${cause.message}` : "Error: the handler failed" };
}

/**
 * Lets the rest of an unread body go: discarded as it arrives (never kept; a read that ended has
 * removed its own listener), so the client can finish sending and read the answer before the
 * connection closes; cut after `withinMs`, so a sender that never stops does not hold the
 * connection.
 */
function drain(request: IncomingMessage, withinMs: number): void {
  // Stryker disable next-line ConditionalExpression: a complete request's cut is cleared by its close, or finds the request done
  if (request.complete) return;
  const cut = setTimeout(() => request.destroy(), withinMs);
  cut.unref();
  // Stryker disable next-line ArrowFunction,StringLiteral: a request that ended before the cut gives it nothing to destroy but a kept-alive connection, which GitHub does not keep
  request.once("close", () => clearTimeout(cut));
  // Stryker disable next-line ExpressionStatement: node's server also dumps an unread body once the answer is sent; this says so where the body is let go
  request.resume();
}

/** True when `signature` (`sha256=<hex>`) is the HMAC-SHA256 of `body` with `secret`. */
export function signatureMatches(secret: string, body: Buffer, signature: string): boolean {
  if (!signature.startsWith("sha256=")) return false;
  const expected = createHmac("sha256", secret).update(body).digest();
  const given = Buffer.from(signature.slice("sha256=".length), "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Reads the body up to `maxBytes`; refuses past it, on a stream error, or after the deadline. */
function readBounded(request: IncomingMessage, maxBytes: number, deadlineMs: number): Promise<{ body: Buffer } | { refusal: Refusal; bytes: number }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    // A second call changes nothing: the promise keeps its first result.
    const finish = (result: { body: Buffer } | { refusal: Refusal; bytes: number }): void => {
      clearTimeout(timer);
      // Stryker disable next-line StringLiteral: only memory tells: a finished read keeps no more chunks (and a refused one none at all)
      request.removeAllListeners("data");
      resolve(result);
    };
    const timer = setTimeout(() => finish({ refusal: { status: 408, reason: "the body did not arrive in time" }, bytes }), deadlineMs);
    request.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        chunks.length = 0;
        finish({ refusal: { status: 413, reason: `the body is over ${maxBytes} bytes` }, bytes });
        return;
      }
      chunks.push(chunk);
    });
    // Stryker disable next-line ConditionalExpression: concatenating one chunk gives the same bytes, copied
    request.once("end", () => finish({ body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) }));
    request.once("error", () => finish({ refusal: { status: 400, reason: "the body could not be read" }, bytes }));
  });
}

/**
 * Wraps Probot's webhook middleware. A verified delivery is handed on with its body already
 * read (`request.body`, which the middleware uses instead of reading the stream again).
 */
export function guardWebhooks(inner: NodeMiddleware, options: WebhookGuardOptions): NodeMiddleware {
  const maxBytes = options.maxBytes ?? MAX_WEBHOOK_BYTES;
  const deadlineMs = options.bodyDeadlineMs ?? BODY_DEADLINE_MS;
  const ownPath = options.path.replace(/\/+$/, "");
  const drainMs = options.drainMs ?? DRAIN_MS;
  let inflight = 0;
  const { shed } = options;
  const slots = shed ? new ClientSlots(shed.maxInflightPerClient ?? defaultMaxInflightPerClient(shed.maxInflight)) : undefined;
  return async (request, response, next) => {
    if (request.method !== "POST" || pathOf(request.url, options.path) !== ownPath) return inner(request, response, next);
    const delivery = { deliveryId: header(request, "x-github-delivery") || "(none)", event: header(request, "x-github-event") || "(none)" };
    const client = clientKey(request.socket.remoteAddress);
    if (shed && slots && (inflight >= shed.maxInflight || !slots.take(client))) {
      const retryAfter = shed.retryAfterSeconds ?? SHED_RETRY_AFTER_SECONDS;
      answer(response, { status: 503, reason: "too many deliveries in flight" }, { "retry-after": String(retryAfter) });
      shed.ledger.record();
      void drainVerifying(request, options.secret, header(request, "x-hub-signature-256"), maxBytes, drainMs).then((verified) => {
        if (verified) shed.ledger.verified(delivery.deliveryId);
      });
      return true;
    }
    inflight += 1;
    try {
      return await guarded(request, response, next, delivery);
    } finally {
      inflight -= 1;
      slots?.give(client);
    }
  };

  async function guarded(
    request: IncomingMessage,
    response: ServerResponse,
    next: (() => void) | undefined,
    delivery: { deliveryId: string; event: string },
  ): Promise<boolean | void> {
    const refuse = (refusal: Refusal, bytes: number): boolean => {
      options.log.warn({ ...delivery, bytes, status: refusal.status, reason: refusal.reason }, "webhook delivery refused");
      answer(response, refusal);
      drain(request, drainMs);
      return true;
    };
    if (options.receive && !JSON_CONTENT.test(header(request, "content-type")))
      return refuse({ status: 415, reason: 'the content type must be "application/json"' }, 0);
    // Absent, the length reads as 0 (a chunked body is measured as it arrives); malformed, as NaN.
    const declared = Number(header(request, "content-length"));
    if (declared > maxBytes) return refuse({ status: 413, reason: `the body is over ${maxBytes} bytes` }, declared);
    const read = await readBounded(request, maxBytes, deadlineMs);
    if ("refusal" in read) return refuse(read.refusal, read.bytes);
    if (!signatureMatches(options.secret, read.body, header(request, "x-hub-signature-256"))) {
      return refuse({ status: 400, reason: "the signature does not match the body and the webhook secret" }, read.body.length);
    }
    if (options.receive)
      return receiveVerified(options.receive, options.answerWithinMs ?? ANSWER_WITHIN_MS, read.body, delivery, refuse, response, options.log);
    (request as IncomingMessage & { body?: string }).body = read.body.toString("utf8");
    return inner(request, response, next);
  }
}

/** Hands a verified delivery to the handlers and answers it: 200, 202 past `withinMs`, or the handlers' error (logged without the payload). */
async function receiveVerified(
  receive: NonNullable<WebhookGuardOptions["receive"]>,
  withinMs: number,
  body: Buffer,
  delivery: { deliveryId: string; event: string },
  refuse: (refusal: Refusal, bytes: number) => boolean,
  response: ServerResponse,
  log: GitHubLog,
): Promise<boolean> {
  if (delivery.deliveryId === "(none)" || delivery.event === "(none)")
    return refuse({ status: 400, reason: "the x-github-event and x-github-delivery headers are required" }, body.length);
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString("utf8"));
  } catch {
    return refuse({ status: 400, reason: "the body is not JSON" }, body.length);
  }
  let late: NodeJS.Timeout | undefined;
  const answered = new Promise<void>((resolve) => {
    late = setTimeout(() => {
      accepted(response, 202, "still processing\n");
      resolve();
    }, withinMs);
  });
  const handled = receive({ id: delivery.deliveryId, name: delivery.event, payload }).then(
    () => accepted(response, 200, "ok\n"),
    (error: unknown) => {
      const failure = failureOf(error);
      log.error({ ...delivery, status: failure.status, reason: failure.reason }, "webhook handler failed");
      answer(response, failure);
    },
  );
  // Stryker disable next-line ArrowFunction: a late timer left running finds the answer sent and writes nothing
  await Promise.race([handled.finally(() => clearTimeout(late)), answered]);
  return true;
}
