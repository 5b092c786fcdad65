/**
 * What the webhook guard answers and logs, exactly: the cap is inclusive, a refusal is JSON
 * naming its reason, an accepted delivery is plain text, a handler's failure keeps a status
 * only when it is an HTTP error status, and every log line names the delivery, never the payload.
 */
import { createHmac } from "node:crypto";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "@jest/globals";
import { guardWebhooks, type WebhookGuardOptions } from "../../src/github/index.js";
import { RecordingLog } from "./fake-setup.js";

const SECRET = "answers-test-secret";
const PATH = "/api/github/webhooks";
const sign = (body: string | Buffer): string => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;

interface Answer {
  status: number;
  type: string | undefined;
  length: string | undefined;
  text: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Starts a guard on a real server; `reached` records what the inner middleware got. */
async function start(options: Partial<WebhookGuardOptions>): Promise<{ port: number; log: RecordingLog; reached: string[] }> {
  const log = new RecordingLog();
  const reached: string[] = [];
  const guard = guardWebhooks(
    async (request, response) => {
      reached.push((request as { body?: string }).body ?? "(stream)");
      response.writeHead(204).end();
      return true;
    },
    { path: PATH, secret: SECRET, log, bodyDeadlineMs: 30_000, ...options },
  );
  const server = createServer((request, response) => void guard(request, response));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, log, reached };
}

/** Posts `body` (signed unless the headers say otherwise), optionally chunked. */
function post(port: number, body: Buffer, headers: Record<string, string> = {}, chunked = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: "127.0.0.1",
      port,
      path: PATH,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": "delivery-42",
        "x-hub-signature-256": sign(body),
        ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(body.length) }),
        ...headers,
      },
    });
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({
        status: response.statusCode ?? 0,
        type: response.headers["content-type"],
        length: response.headers["content-length"],
        text: Buffer.concat(chunks).toString("utf8"),
      }));
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** A JSON body of exactly `bytes` bytes. */
function jsonOf(bytes: number): Buffer {
  const frame = '{"pad":""}';
  return Buffer.from(`{"pad":"${"x".repeat(bytes - frame.length)}"}`);
}

describe("the cap on a delivery's size", () => {
  it("takes a body of exactly the cap, declared or chunked, and refuses one byte more", async () => {
    const { port, reached } = await start({ maxBytes: 4096 });
    expect((await post(port, jsonOf(4096))).status).toBe(204);
    expect((await post(port, jsonOf(4096), {}, true)).status).toBe(204);
    expect(reached).toHaveLength(2);
    expect((await post(port, jsonOf(4097))).status).toBe(413);
    expect((await post(port, jsonOf(4097), {}, true)).status).toBe(413);
    expect(reached).toHaveLength(2);
  });
});

describe("a refusal", () => {
  it("is a JSON answer naming the reason, and a log line naming the delivery, its size and the status, without the body", async () => {
    const { port, log } = await start({});
    const body = Buffer.from(JSON.stringify({ payload_marker: "never-logged" }));
    const answer = await post(port, body, { "x-hub-signature-256": sign("something else") });
    expect(answer).toEqual({
      status: 400,
      type: "application/json",
      length: undefined,
      text: `${JSON.stringify({ error: "the signature does not match the body and the webhook secret" })}\n`,
    });
    expect(log.lines).toEqual([{
      level: "warn",
      message: "webhook delivery refused",
      details: { deliveryId: "delivery-42", event: "issues", bytes: body.length, status: 400, reason: "the signature does not match the body and the webhook secret" },
    }]);
  });

  it("refuses empty id and event headers as missing ones, and names the delivery (none)", async () => {
    const { port, log } = await start({ receive: async () => undefined });
    const answer = await post(port, Buffer.from("{}"), { "x-github-delivery": "", "x-github-event": "" });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toEqual({ error: "the x-github-event and x-github-delivery headers are required" });
    expect(log.lines.map((line) => line.details)).toEqual([
      { deliveryId: "(none)", event: "(none)", bytes: 2, status: 400, reason: "the x-github-event and x-github-delivery headers are required" },
    ]);
  });
});

describe("a delivery the handlers take", () => {
  it("is answered 200 in plain text with its length", async () => {
    const { port, log } = await start({ receive: async () => undefined });
    expect(await post(port, Buffer.from("{}"))).toEqual({ status: 200, type: "text/plain", length: "3", text: "ok\n" });
    expect(log.lines).toEqual([]);
  });

  it("is answered 202 in plain text after Probot's 9 s when the handlers are still running and no deadline is given", async () => {
    let release: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (release = resolve));
    const { port } = await start({ receive: () => running });
    const answer = await post(port, Buffer.from("{}"));
    release();
    expect(answer).toEqual({ status: 202, type: "text/plain", length: String("still processing\n".length), text: "still processing\n" });
  }, 60_000);

  it("waits for handlers that finish well within Probot's 9 s when no deadline is given", async () => {
    // A generous margin, not a budget: the handlers finish 300 ms in, the answer may wait 9 s.
    const { port } = await start({ receive: () => new Promise((resolve) => setTimeout(resolve, 300)) });
    expect((await post(port, Buffer.from("{}"))).status).toBe(200);
  });
});

describe("a handler's failure", () => {
  const cases: Array<{ thrown: unknown; status: number; reason: string }> = [
    { thrown: new AggregateError([Object.assign(new Error("gone"), { status: 410 })]), status: 410, reason: "Error: gone" },
    { thrown: Object.assign(new TypeError("bad input"), { status: 422 }), status: 422, reason: "TypeError: bad input" },
    { thrown: Object.assign(new Error("lowest"), { status: 400 }), status: 400, reason: "Error: lowest" },
    { thrown: Object.assign(new Error("highest"), { status: 599 }), status: 599, reason: "Error: highest" },
    { thrown: Object.assign(new Error("a redirect is no error status"), { status: 399 }), status: 500, reason: "Error: a redirect is no error status" },
    { thrown: Object.assign(new Error("past the range"), { status: 600 }), status: 500, reason: "Error: past the range" },
    { thrown: Object.assign(new Error("text status"), { status: "404" }), status: 500, reason: "Error: text status" },
    { thrown: { message: "no name" }, status: 500, reason: "Error: no name" },
    { thrown: new Error(""), status: 500, reason: "Error: the handler failed" },
    { thrown: undefined, status: 500, reason: "Error: the handler failed" },
  ];

  it.each(cases)("is answered $status with $reason, logged without the payload", async ({ thrown, status, reason }) => {
    const { port, log } = await start({ receive: () => Promise.reject(thrown) });
    const answer = await post(port, Buffer.from(JSON.stringify({ payload_marker: "never-logged" })));
    expect(answer).toEqual({ status, type: "application/json", length: undefined, text: `${JSON.stringify({ error: reason })}\n` });
    expect(log.lines).toEqual([{ level: "error", message: "webhook handler failed", details: { deliveryId: "delivery-42", event: "issues", status, reason } }]);
  });
});
