/**
 * The door of the webhook endpoint, in front of Probot's middleware: a body over GitHub's
 * 25 MB cap is refused from its `Content-Length` before a byte is read (or as soon as a
 * chunked one passes the cap), a body that does not arrive in time is refused, and the
 * signature is checked here — a delivery whose signature does not verify never reaches
 * Probot, whose error handlers would log the whole payload. Only the delivery id, the event
 * name and the size of a refused delivery are logged.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { GitHubLog } from "./log.js";

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
}

type Refusal = { status: number; reason: string };

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** How long the rest of a refused body is drained (discarded as it arrives) before the connection is cut. */
const DRAIN_MS = 10_000;

function answer(response: ServerResponse, refusal: Refusal): void {
  if (response.headersSent) return;
  response.writeHead(refusal.status, { "content-type": "application/json" });
  response.end(`${JSON.stringify({ error: refusal.reason })}\n`);
}

/**
 * Lets the rest of an unread body go: discarded as it arrives (never kept), so the client can
 * read the answer before the connection closes; cut after a while, so a sender that never
 * stops does not hold the connection.
 */
function drain(request: IncomingMessage): void {
  if (request.complete) return;
  const cut = setTimeout(() => request.destroy(), DRAIN_MS);
  cut.unref();
  request.once("end", () => clearTimeout(cut));
  request.once("close", () => clearTimeout(cut));
  request.removeAllListeners("data");
  request.resume();
}

/** True when `signature` (`sha256=<hex>`) is the HMAC-SHA256 of `body` with `secret`. */
export function signatureMatches(secret: string, body: Buffer, signature: string | undefined): boolean {
  if (!signature?.startsWith("sha256=")) return false;
  const expected = createHmac("sha256", secret).update(body).digest();
  const given = Buffer.from(signature.slice("sha256=".length), "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Reads the body up to `maxBytes`; refuses past it, on a stream error, or after the deadline. */
function readBounded(request: IncomingMessage, maxBytes: number, deadlineMs: number): Promise<{ body: Buffer } | { refusal: Refusal; bytes: number }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    const finish = (result: { body: Buffer } | { refusal: Refusal; bytes: number }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
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
    request.once("end", () => finish({ body: Buffer.concat(chunks) }));
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
  return async (request, response, next) => {
    const pathname = new URL(request.url ?? "/", "http://localhost").pathname.replace(/\/+$/, "");
    if (request.method !== "POST" || pathname !== options.path.replace(/\/+$/, "")) return inner(request, response, next);
    const delivery = { deliveryId: header(request, "x-github-delivery") ?? "(none)", event: header(request, "x-github-event") ?? "(none)" };
    const refuse = (refusal: Refusal, bytes: number): boolean => {
      options.log.warn({ ...delivery, bytes, status: refusal.status, reason: refusal.reason }, "webhook delivery refused");
      answer(response, refusal);
      drain(request);
      return true;
    };
    const declared = Number(header(request, "content-length") ?? Number.NaN);
    if (Number.isFinite(declared) && declared > maxBytes) return refuse({ status: 413, reason: `the body is over ${maxBytes} bytes` }, declared);
    const read = await readBounded(request, maxBytes, deadlineMs);
    if ("refusal" in read) return refuse(read.refusal, read.bytes);
    if (!signatureMatches(options.secret, read.body, header(request, "x-hub-signature-256"))) {
      return refuse({ status: 400, reason: "the signature does not match the body and the webhook secret" }, read.body.length);
    }
    (request as IncomingMessage & { body?: string }).body = read.body.toString("utf8");
    return inner(request, response, next);
  };
}
