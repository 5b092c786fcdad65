/**
 * The webhook guard on a real HTTP server: oversized bodies are refused from their headers (the
 * answer comes while the client is still sending), chunked ones once they pass the cap, and a
 * delivery whose signature fails never reaches the inner middleware and is logged without its body.
 */
import { createHmac } from "node:crypto";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { guardWebhooks } from "../../src/github/index.js";
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
    const req = httpRequest({ host: "127.0.0.1", port, path: PATH, method: "POST", headers: { "x-github-event": "issues", "x-github-delivery": "d-1", ...headers } });
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
