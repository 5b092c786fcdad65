/**
 * `harness serve` at its door, as an attacker on the network meets it: idle connections past
 * HARNESS_MAX_CONNECTIONS are answered 503 (before, they were held until the process ran out of
 * descriptors), and the status token offered in the URL or a header never reaches the App's log
 * (before, Probot's request logger wrote the URL and the headers).
 */
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { startApp, type RunningApp } from "./app-process.js";
import { eventually } from "../support/poll.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

const STATUS_TOKEN = "door-test-status-token-3f9c1e";
const CAP = 20;

let app: RunningApp;
const sockets: Socket[] = [];

// Declared before the fake's teardown (jest runs afterAll hooks in order): the App stops while the fake still answers.
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await app?.stop();
  removeTempDirs();
});

const fake = useFakeGitHub();

beforeAll(async () => {
  const root = makeTempDir("harness-serve-door-");
  app = await startApp({
    fake,
    home: join(root, "home"),
    workDir: root,
    env: { HARNESS_MAX_CONNECTIONS: String(CAP) },
    dotenv: { HARNESS_STATUS_TOKEN: STATUS_TOKEN },
  });
});

/** One request on a connection of its own (no keep-alive pool): its status and headers, or the error. */
function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; retryAfter?: string } | { error: string }> {
  return new Promise((resolve) => {
    const sent = request({ host: "127.0.0.1", port: app.port, path, headers, agent: false }, (response) => {
      response.resume();
      response.once("end", () =>
        resolve({ status: response.statusCode ?? 0, ...(response.headers["retry-after"] ? { retryAfter: response.headers["retry-after"] } : {}) }),
      );
    });
    sent.once("error", (error) => resolve({ error: error.message }));
    sent.end();
  });
}

function idleConnection(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: app.port }, () => resolve(socket));
    socket.once("error", reject);
    socket.on("error", () => undefined);
    sockets.push(socket);
  });
}

describe("harness serve: the connection cap", () => {
  it("answers 503 with Retry-After past HARNESS_MAX_CONNECTIONS idle connections, and serves again once they close", async () => {
    for (let opened = 0; opened < CAP; opened += 1) await idleConnection();

    expect(await get("/ping")).toEqual({ status: 503, retryAfter: "5" });
    expect(await get("/ping")).toEqual({ status: 503, retryAfter: "5" });
    expect(await app.log()).toContain(`at most ${CAP} connections at once (HARNESS_MAX_CONNECTIONS)`);

    for (const socket of sockets.splice(0)) socket.destroy();
    expect(
      await eventually(
        "/ping answering 200 again",
        async () => {
          const answer = await get("/ping");
          return "status" in answer && answer.status === 200 ? answer : undefined;
        },
        30_000,
      ),
    ).toEqual({ status: 200 });
  });
});

describe("harness serve: the status token and the log", () => {
  it("logs the status requests without the token, from the query or the Authorization header", async () => {
    expect(await get(`/harness?token=${STATUS_TOKEN}`)).toEqual({ status: 200 });
    expect(await get(`/harness/status.json?to%6Ben=${STATUS_TOKEN}&view=x`)).toEqual({ status: 200 });
    expect(await get("/harness/status.json", { authorization: `Bearer ${STATUS_TOKEN}` })).toEqual({ status: 200 });
    expect(await get(`/harness?token=${STATUS_TOKEN}-wrong`)).toEqual({ status: 401 });

    // Probot's request logger writes a line per request once its answer is sent.
    const log = await eventually(
      "the four request lines in the App's log",
      async () => {
        const text = await app.log();
        return text.split("\n").filter((line) => line.includes('"msg":"GET /harness')).length >= 4 ? text : undefined;
      },
      30_000,
    );
    const leaking = log.split("\n").filter((line) => line.includes(STATUS_TOKEN));
    expect(leaking).toEqual([]);
    expect(log.split("\n").filter((line) => line.includes('"msg":"GET /harness/status.json 200'))).toHaveLength(1);
    expect(log.split("\n").filter((line) => line.includes('"msg":"GET /harness/status.json?view=x 200'))).toHaveLength(1);
  });
});
