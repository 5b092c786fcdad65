/**
 * A fake model provider on loopback for the real agent CLIs: the Anthropic Messages API and the
 * OpenAI Responses API, streamed, scripted per seat. It records every request (the seat, the turn,
 * the credentials it was sent) so a test asserts what the CLIs really sent.
 *
 * It runs in the test's own process: a run that is killed takes it along (nothing listens after
 * the test process is gone), and `stop()` ends it, its hanging answers included, at teardown.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { messagesAnswer, readMessages, type MessagesRequest } from "./anthropic.js";
import { readResponses, responsesAnswer, type ResponsesRequest } from "./openai.js";
import { seatOf, stepOf, type Script, type Step } from "./script.js";
import type { Answer, Usage } from "./wire.js";

export { completingScript, seatOf, shq, type Script, type Step } from "./script.js";

/** One request the provider received. */
export interface ProviderRequest {
  api: "anthropic" | "openai" | "other";
  method: string;
  path: string;
  /** The credential headers as received (absent when not sent). */
  apiKey?: string;
  authorization?: string;
  /** The seat its prompt is for; undefined for a CLI's side request (a title, a probe). */
  seat?: string;
  /** Tool results in the conversation so far. */
  turn: number;
  /** What was answered. */
  answered: Step["kind"] | "side" | "not-found";
  /** When its headers arrived (`Date.now()`), for benchmarks timing a CLI's launch to its first request. */
  at: number;
}

export interface FakeProvider {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: ProviderRequest[];
  /** The requests that carried a seat's prompt, by seat. */
  turnsOf(seat: string): ProviderRequest[];
  stop(): Promise<void>;
}

export interface FakeProviderOptions {
  script: Script;
  /** Tokens each answer is said to cost (default 100 in, 20 out). */
  usage?: Usage;
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return text === "" ? {} : (JSON.parse(text) as unknown);
  } catch {
    return {};
  }
}

function send(response: ServerResponse, answer: Answer): void {
  if ("json" in answer) {
    response.writeHead(answer.status, { "content-type": "application/json" });
    response.end(JSON.stringify(answer.json));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const event of answer.stream) response.write(event);
  response.end();
}

/** Starts the provider on a free loopback port. */
export async function startFakeProvider(options: FakeProviderOptions): Promise<FakeProvider> {
  const usage = options.usage ?? { input: 100, output: 20 };
  const requests: ProviderRequest[] = [];
  const sockets = new Set<Socket>();
  let answers = 0;
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const at = Date.now();
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const body = await bodyOf(request);
    const api =
      request.method === "POST" && /\/messages$/.test(path) ? "anthropic" : request.method === "POST" && /\/responses$/.test(path) ? "openai" : "other";
    const record: ProviderRequest = {
      api,
      method: request.method ?? "GET",
      path,
      turn: 0,
      answered: "not-found",
      at,
      ...(typeof request.headers["x-api-key"] === "string" ? { apiKey: request.headers["x-api-key"] } : {}),
      ...(request.headers.authorization !== undefined ? { authorization: request.headers.authorization } : {}),
    };
    requests.push(record);
    if (api === "other") {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { type: "not_found_error", message: `fake provider: no ${record.method} ${path}` } }));
      return;
    }
    const read = api === "anthropic" ? readMessages(body as MessagesRequest) : readResponses(body as ResponsesRequest);
    const seat = read.tools ? seatOf(read.prompt) : undefined;
    record.turn = read.turn;
    if (seat !== undefined) record.seat = seat;
    // A request without tools is a CLI's side request (a title, a quota probe): a short answer, no turn of a seat.
    const step = seat === undefined ? ({ kind: "answer", text: "ok" } as const) : stepOf(options.script, seat, read.turn);
    record.answered = seat === undefined ? "side" : step.kind;
    answers += 1;
    if (step.kind === "hang") return;
    if (step.kind === "garbage") {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end("this is not an event\n\n{{{\n\n");
      return;
    }
    const id = `${answers}`;
    send(response, api === "anthropic" ? messagesAnswer(body as MessagesRequest, step, id, usage) : responsesAnswer(body as ResponsesRequest, step, id, usage));
  };
  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { "content-type": "text/plain" });
      response.end(`fake provider failed: ${String(error)}`);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    turnsOf: (seat) => requests.filter((request) => request.seat === seat),
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
