/**
 * What the webhook guard answers and logs, exactly: the cap is inclusive, a refusal is JSON
 * naming its reason, an accepted delivery is plain text, a handler's failure keeps a status
 * only when it is an HTTP error status, and every log line names the delivery, never the payload.
 */
import { createHmac } from "node:crypto";
import { createServer, request as httpRequest, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "@jest/globals";
import { guardWebhooks, type WebhookGuardOptions } from "../../src/github/door/index.js";
import { eventually } from "../support/poll.js";
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

/** Starts a guard on a real server; `reached` records what the inner middleware got, `returned` what the guard returned. */
async function start(options: Partial<WebhookGuardOptions>): Promise<{ port: number; log: RecordingLog; reached: string[]; returned: unknown[] }> {
  const log = new RecordingLog();
  const reached: string[] = [];
  const returned: unknown[] = [];
  const guard = guardWebhooks(
    async (request, response) => {
      reached.push((request as { body?: string }).body ?? "(stream)");
      response.writeHead(204).end();
      return true;
    },
    { path: PATH, secret: SECRET, log, bodyDeadlineMs: 30_000, ...options },
  );
  const server = createServer((request, response) => void Promise.resolve(guard(request, response)).then((value) => returned.push(value)));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, log, reached, returned };
}

/** Posts `body` (signed unless the headers say otherwise), optionally chunked. */
function post(port: number, body: Buffer, headers: Record<string, string> = {}, chunked = false, path = PATH): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: "127.0.0.1",
      port,
      path,
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
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          type: response.headers["content-type"],
          length: response.headers["content-length"],
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
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

describe("the body's deadline", () => {
  it("is BODY_DEADLINE_MS when none is given: a body sent in two parts is taken", async () => {
    const { port, reached } = await start({ bodyDeadlineMs: undefined });
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest({
        host: "127.0.0.1",
        port,
        path: PATH,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": "2",
          "x-github-event": "issues",
          "x-github-delivery": "two-parts",
          "x-hub-signature-256": sign("{}"),
        },
      });
      request.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on("error", reject);
      request.write("{", () => setTimeout(() => request.end("}"), 100));
    });
    expect(status).toBe(204);
    expect(reached).toEqual(["{}"]);
  });
});

describe("the cap on a delivery's size", () => {
  it("takes a body of exactly the cap, declared or chunked, and refuses one byte more", async () => {
    const { port, reached } = await start({ maxBytes: 4096 });
    expect((await post(port, jsonOf(4096))).status).toBe(204);
    expect((await post(port, jsonOf(4096), {}, true)).status).toBe(204);
    expect(reached).toHaveLength(2);
    const over = `${JSON.stringify({ error: "the body is over 4096 bytes" })}\n`;
    expect(await post(port, jsonOf(4097))).toMatchObject({ status: 413, text: over });
    expect(await post(port, jsonOf(4097), {}, true)).toMatchObject({ status: 413, text: over });
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
    expect(log.lines).toEqual([
      {
        level: "warn",
        message: "webhook delivery refused",
        details: {
          deliveryId: "delivery-42",
          event: "issues",
          bytes: body.length,
          status: 400,
          reason: "the signature does not match the body and the webhook secret",
        },
      },
    ]);
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

  it("is answered 202 in plain text when the handlers are still running at the deadline, and once only when they end later", async () => {
    const ends: Array<() => void> = [];
    const { port, log, returned } = await start({
      answerWithinMs: 100,
      receive: (event) =>
        new Promise<void>((resolve, reject) => ends.push((event.payload as { fail?: boolean }).fail ? () => reject(new Error("late failure")) : resolve)),
    });
    const unhandled: unknown[] = [];
    const record = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", record);
    const answer = await post(port, Buffer.from("{}"));
    expect(answer).toEqual({ status: 202, type: "text/plain", length: String("still processing\n".length), text: "still processing\n" });
    expect((await post(port, Buffer.from('{"fail":true}'))).status).toBe(202);
    expect(returned).toEqual([true, true]);
    for (const end of ends) end();
    // The late failure is logged; neither late end writes a second answer (it would throw, unhandled).
    await eventually("the late failure's log line", () => (log.lines.length === 1 ? true : undefined));
    expect(log.lines[0]).toMatchObject({ level: "error", message: "webhook handler failed", details: { status: 500, reason: "Error: late failure" } });
    expect(await post(port, Buffer.from("{}")).then((next) => next.status)).toBe(202);
    process.off("unhandledRejection", record);
    expect(unhandled).toEqual([]);
  });

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

describe("what the guard reads", () => {
  it("refuses a signature of another algorithm or of the wrong length with 400, never throwing", async () => {
    const { port, reached, returned } = await start({});
    const body = Buffer.from("{}");
    const hex = createHmac("sha256", SECRET).update(body).digest("hex");
    expect((await post(port, body, { "x-hub-signature-256": `sha512=${hex}` })).status).toBe(400);
    expect((await post(port, body, { "x-hub-signature-256": `sha256=${hex.slice(0, 8)}` })).status).toBe(400);
    expect((await post(port, body, { "x-hub-signature-256": `sha256=${hex}` })).status).toBe(204);
    expect(reached).toEqual(["{}"]);
    expect(returned).toEqual([true, true, true]);
  });

  it("refuses another content type with 415 when it answers deliveries itself", async () => {
    const { port } = await start({ receive: async () => undefined });
    const answer = await post(port, Buffer.from("{}"), { "content-type": "application/x-www-form-urlencoded" });
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.text)).toEqual({ error: 'the content type must be "application/json"' });
  });

  it("takes its path with any number of trailing slashes, configured or requested", async () => {
    const { port, reached } = await start({ path: "/custom/hooks//" });
    for (const path of ["/custom/hooks", "/custom/hooks/", "/custom/hooks//", "/custom/hooks///?x=1"]) {
      expect((await post(port, Buffer.from("{}"), {}, false, path)).status).toBe(204);
    }
    // Read and verified by the guard, not passed on unread.
    expect(reached).toEqual(["{}", "{}", "{}", "{}"]);
    const plain = await start({ receive: async () => undefined });
    expect((await post(plain.port, Buffer.from("{}"), {}, false, `${PATH}//`)).text).toBe("ok\n");
  });

  it("refuses a body that does not arrive in time with 408", async () => {
    const { port, log } = await start({ bodyDeadlineMs: 200 });
    const answer = await new Promise<number>((resolve, reject) => {
      const request = httpRequest({
        host: "127.0.0.1",
        port,
        path: PATH,
        method: "POST",
        headers: { "content-type": "application/json", "content-length": "100", "x-github-event": "issues", "x-github-delivery": "slow" },
      });
      request.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
        request.destroy();
      });
      request.on("error", reject);
      request.write("{");
    });
    expect(answer).toBe(408);
    expect(log.lines.map((line) => line.details)).toEqual([
      { deliveryId: "slow", event: "issues", bytes: 1, status: 408, reason: "the body did not arrive in time" },
    ]);
  });

  it("logs a body whose sender went away mid-way as one that could not be read", async () => {
    const { port, log, reached } = await start({});
    const request = httpRequest({
      host: "127.0.0.1",
      port,
      path: PATH,
      method: "POST",
      headers: { "content-type": "application/json", "content-length": "100", "x-github-event": "issues", "x-github-delivery": "gone" },
    });
    request.on("error", () => undefined);
    request.write('{"partial":', () => setTimeout(() => request.destroy(), 50));
    const line = await eventually("the refusal's log line", () => log.lines[0]);
    expect(line.details).toEqual({ deliveryId: "gone", event: "issues", bytes: 11, status: 400, reason: "the body could not be read" });
    expect(reached).toEqual([]);
  });
});

/**
 * Over a raw socket (node's own client stops sending once the answer is in): sends the headers
 * and 2 KiB, waits for the answer, then sends `times` chunks of 64 KiB (pacing them when
 * `paced`). Resolves once all were handed to the kernel, once the server cut the connection,
 * or, with `giveUpMs`, when the server has neither read them all nor cut it by then.
 */
function refusedUpload(
  port: number,
  framing: "declared" | "chunked",
  times: number,
  options: { paced?: boolean; giveUpMs?: number } = {},
): Promise<{ status: string; upload: "finished" | "cut" | "still sending" }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const frame = (bytes: Buffer): Buffer =>
      framing === "chunked" ? Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]) : bytes;
    const length = framing === "chunked" ? "transfer-encoding: chunked" : `content-length: ${2048 + times * chunk.length}`;
    let answer = "";
    const done = (upload: "finished" | "cut" | "still sending"): void => {
      resolve({ status: answer.slice(0, 12), upload });
      socket.destroy();
    };
    socket.on("error", () => done("cut"));
    socket.on("close", () => done("cut"));
    socket.on("data", (data: Buffer) => {
      const started = answer.includes("\r\n\r\n");
      answer += data.toString("latin1");
      if (started || !answer.includes("\r\n\r\n")) return;
      if (options.giveUpMs !== undefined) setTimeout(() => done("still sending"), options.giveUpMs);
      let sent = 0;
      const pump = (): void => {
        while (sent < times && !socket.destroyed) {
          sent += 1;
          if (options.paced) {
            socket.write(frame(chunk), () => setTimeout(pump, 5));
            return;
          }
          if (!socket.write(frame(chunk))) {
            socket.once("drain", pump);
            return;
          }
        }
        if (!socket.destroyed) socket.write(framing === "chunked" ? "0\r\n\r\n" : "", () => done("finished"));
      };
      // After the answer, 32 MB more: more than any socket buffer holds, so only a server that reads them lets the upload finish.
      setTimeout(pump, 200);
    });
    socket.write(
      `POST ${PATH} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\nx-github-event: issues\r\nx-github-delivery: big\r\n${length}\r\n\r\n`,
    );
    socket.write(frame(Buffer.alloc(2048, 0x61)));
  });
}

describe("the rest of a refused body", () => {
  it("is read and let go, so a sender can finish sending after the answer", async () => {
    const { port } = await start({ maxBytes: 1024 });
    expect(await refusedUpload(port, "declared", 512)).toEqual({ status: "HTTP/1.1 413", upload: "finished" });
    expect(await refusedUpload(port, "chunked", 512)).toEqual({ status: "HTTP/1.1 413", upload: "finished" });
  });

  it("is cut once the drain's time is up, so a sender that never stops does not hold the connection", async () => {
    const { port } = await start({ maxBytes: 1024, drainMs: 300 });
    // Generous: the cut comes 300 ms after the answer; 20 s of sending without one means there is none.
    expect(await refusedUpload(port, "declared", 1_000_000, { paced: true, giveUpMs: 20_000 })).toEqual({ status: "HTTP/1.1 413", upload: "cut" });
    expect(await refusedUpload(port, "chunked", Number.MAX_SAFE_INTEGER, { paced: true, giveUpMs: 20_000 })).toEqual({ status: "HTTP/1.1 413", upload: "cut" });
  });
});
