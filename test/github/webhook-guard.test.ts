/**
 * The webhook guard on a real HTTP server: oversized bodies are refused from their headers (the
 * answer comes while the client is still sending), chunked ones once they pass the cap, and a
 * delivery whose signature fails never reaches the inner middleware and is logged without its body.
 */
import { createHmac } from "node:crypto";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { guardWebhooks } from "../../src/github/door/index.js";
import { RecordingLog } from "./fake-setup.js";

const SECRET = "guard-test-secret";
const PATH = "/api/github/webhooks";
const MAX = 1024 * 1024;

let server: Server;
let port: number;
const log = new RecordingLog();
const reached: string[] = [];

beforeAll(async () => {
  const guard = guardWebhooks(
    async (request, response) => {
      reached.push((request as IncomingMessage & { body?: string }).body ?? "(stream)");
      response.writeHead(200).end("ok\n");
      return true;
    },
    { path: PATH, secret: SECRET, log, maxBytes: MAX, bodyDeadlineMs: 30_000 },
  );
  server = createServer((request, response) => void guard(request, response));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const sign = (body: string | Buffer): string => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;

/** Sends headers and then `chunks` one by one until the answer arrives; resolves with the status and how much was sent by then. */
function send(headers: Record<string, string | number>, chunk: Buffer, times: number): Promise<{ status: number; sentBefore: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      path: PATH,
      method: "POST",
      headers: { "x-github-event": "issues", "x-github-delivery": "d-1", ...headers },
    });
    req.on("response", (response) => {
      answered = true;
      response.resume();
      resolve({ status: response.statusCode ?? 0, sentBefore: sent });
      req.destroy();
    });
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    const pump = (): void => {
      while (!answered && sent < times) {
        sent += 1;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!answered && sent >= times) req.end();
    };
    pump();
  });
}

describe("guardWebhooks", () => {
  it("refuses a body declared over the cap with 413 before reading it", async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const { status, sentBefore } = await send({ "content-type": "application/json", "content-length": 26 * MAX }, chunk, 26 * 16);
    expect(status).toBe(413);
    // The answer came before the client had sent the body: it was not waited for.
    expect(sentBefore).toBeLessThan(26 * 16);
    expect(log.lines.some((entry) => entry.message === "webhook delivery refused" && (entry.details as { bytes?: number }).bytes === 26 * MAX)).toBe(true);
  });

  it("refuses a chunked body once it passes the cap", async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x62);
    const { status } = await send({ "content-type": "application/json", "transfer-encoding": "chunked" }, chunk, 64);
    expect(status).toBe(413);
  });

  it("answers a bad or missing signature itself and logs the delivery without its body", async () => {
    const body = JSON.stringify({ marker: "unverified-payload-marker" });
    const bad = await send({ "content-type": "application/json", "x-hub-signature-256": sign("other") }, Buffer.from(body), 1);
    const missing = await send({ "content-type": "application/json" }, Buffer.from(body), 1);
    expect([bad.status, missing.status]).toEqual([400, 400]);
    expect(reached).not.toContain(body);
    expect(JSON.stringify(log.lines)).not.toContain("unverified-payload-marker");
  });

  it("hands a verified delivery on with its body read", async () => {
    const body = JSON.stringify({ marker: "verified" });
    const ok = await send({ "content-type": "application/json", "x-hub-signature-256": sign(body) }, Buffer.from(body), 1);
    expect(ok.status).toBe(200);
    expect(reached).toContain(body);
  });
});

describe("guardWebhooks answering deliveries itself (given Probot's receive)", () => {
  let own: Server;
  let ownPort: number;
  const received: { id: string; name: string; payload: unknown }[] = [];
  const innerReached: string[] = [];
  const ownLog = new RecordingLog();
  let behaviour: "ok" | "fail" | "slow" = "ok";
  let releaseSlow: () => void = () => undefined;

  beforeAll(async () => {
    const guard = guardWebhooks(
      async (request, response) => {
        innerReached.push(request.url ?? "");
        response.writeHead(404).end();
        return true;
      },
      {
        path: PATH,
        secret: SECRET,
        log: ownLog,
        maxBytes: MAX,
        bodyDeadlineMs: 30_000,
        answerWithinMs: 200,
        receive: async (event) => {
          received.push(event);
          if (behaviour === "fail") throw new AggregateError([Object.assign(new Error("no such installation"), { status: 404 })]);
          if (behaviour === "slow") await new Promise<void>((resolve) => (releaseSlow = resolve));
        },
      },
    );
    own = createServer((request, response) => void guard(request, response));
    await new Promise<void>((resolve) => own.listen(0, "127.0.0.1", resolve));
    ownPort = (own.address() as AddressInfo).port;
  });

  afterAll(async () => {
    releaseSlow();
    own.closeAllConnections();
    await new Promise((resolve) => own.close(resolve));
  });

  const post = async (body: string, headers: Record<string, string> = {}, path = PATH): Promise<{ status: number; text: string }> => {
    const response = await fetch(`http://127.0.0.1:${ownPort}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "issues", "x-github-delivery": "d-own", "x-hub-signature-256": sign(body), ...headers },
      body,
    });
    return { status: response.status, text: await response.text() };
  };

  it("hands a verified delivery to receive, parsed once, and answers 200 when the handlers are done", async () => {
    behaviour = "ok";
    const answer = await post(JSON.stringify({ action: "labeled", marker: 1 }), {}, `${PATH}/`);
    expect(answer).toEqual({ status: 200, text: "ok\n" });
    expect(received.at(-1)).toEqual({ id: "d-own", name: "issues", payload: { action: "labeled", marker: 1 } });
    expect(innerReached).toEqual([]);
  });

  it("still sends other paths and methods to the inner middleware", async () => {
    await post("{}", {}, "/elsewhere");
    await fetch(`http://127.0.0.1:${ownPort}${PATH}`);
    expect(innerReached).toEqual(["/elsewhere", PATH]);
  });

  it("refuses what Probot's middleware refuses, before any handler runs: wrong content type, missing headers, a body that is not JSON", async () => {
    const before = received.length;
    expect((await post("{}", { "content-type": "text/plain" })).status).toBe(415);
    const noEvent = await fetch(`http://127.0.0.1:${ownPort}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", "x-github-delivery": "d-x", "x-hub-signature-256": sign("{}") },
      body: "{}",
    });
    expect(noEvent.status).toBe(400);
    expect(await noEvent.text()).toContain("x-github-event");
    const notJson = await post("{not json");
    expect(notJson.status).toBe(400);
    expect(notJson.text).toContain("not JSON");
    expect(received.length).toBe(before);
  });

  it("answers a handler's failure with its status and message, logged without the payload", async () => {
    behaviour = "fail";
    const answer = await post(JSON.stringify({ secret_marker: "payload-never-logged" }));
    expect(answer.status).toBe(404);
    expect(answer.text).toContain("no such installation");
    expect(ownLog.lines.some((entry) => entry.message === "webhook handler failed")).toBe(true);
    expect(JSON.stringify(ownLog.lines)).not.toContain("payload-never-logged");
  });

  it("answers 202 when the handlers are still running past the answer's deadline", async () => {
    behaviour = "slow";
    const answer = await post(JSON.stringify({ slow: true }));
    expect(answer).toEqual({ status: 202, text: "still processing\n" });
    releaseSlow();
  });
});
