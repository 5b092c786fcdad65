/**
 * Shedding at the webhook door: with `maxInflight` deliveries held by the handlers, the next
 * ones are answered 503 with Retry-After before their body is read, counted and named in at
 * most one log line a window; once the handlers let go, the next delivery is served. The
 * handlers are held by a gate and the ledger's windows by a hand-driven clock: nothing is timed.
 */
import { createHmac } from "node:crypto";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "@jest/globals";
import { guardWebhooks, SHED_IDS_KEPT, SHED_IDS_LOGGED, SHED_RETRY_AFTER_SECONDS, ShedLedger, type ShedClock } from "../../src/github/door/index.js";
import { eventually } from "../support/poll.js";
import { RecordingLog } from "./fake-setup.js";

const SECRET = "shed-test-secret";
const PATH = "/api/github/webhooks";
const sign = (body: string): string => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;

/** A clock whose timers run only when the test says so. */
class HandClock implements ShedClock {
  readonly timers: Array<{ run: () => void; ms: number }> = [];
  setTimer(run: () => void, ms: number): void {
    this.timers.push({ run, ms });
  }
  /** Runs the pending timers (those set before the call). */
  fire(): void {
    for (const timer of this.timers.splice(0)) timer.run();
  }
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface Door {
  port: number;
  log: RecordingLog;
  ledger: ShedLedger;
  clock: HandClock;
  received: string[];
  quiet: number[];
  release(): void;
}

/** A guard on a real server whose handlers wait for `release()`. */
async function startDoor(maxInflight: number, retryAfterSeconds?: number, maxInflightPerClient = maxInflight): Promise<Door> {
  const log = new RecordingLog();
  const clock = new HandClock();
  const quiet: number[] = [];
  const ledger = new ShedLedger({ log, clock, onQuiet: () => quiet.push(ledger.total) });
  const received: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const guard = guardWebhooks(async () => false, {
    path: PATH,
    secret: SECRET,
    log,
    bodyDeadlineMs: 60_000,
    receive: async (event) => {
      received.push(event.id);
      await gate;
    },
    shed: { maxInflight, maxInflightPerClient, ledger, ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) },
  });
  const server = createServer((request, response) => void guard(request, response));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, log, ledger, clock, received, quiet, release };
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  text: string;
}

/** Posts a signed delivery `id`; with `withhold`, sends the headers and never the body. */
function deliver(port: number, id: string, withhold = false): Promise<Answer> {
  const body = JSON.stringify({ action: "labeled", id });
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: "127.0.0.1",
      port,
      path: PATH,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(body.length),
        "x-github-event": "issues",
        "x-github-delivery": id,
        "x-hub-signature-256": sign(body),
      },
    });
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        resolve({ status: response.statusCode ?? 0, retryAfter: response.headers["retry-after"], text: Buffer.concat(chunks).toString("utf8") });
        if (withhold) request.destroy();
      });
    });
    request.on("error", (error) => (withhold ? undefined : reject(error)));
    if (withhold) request.flushHeaders();
    else request.end(body);
  });
}

const shedLines = (log: RecordingLog): Array<Record<string, unknown>> =>
  log.lines.filter((line) => line.message === "webhook deliveries shed: too many in flight").map((line) => line.details as Record<string, unknown>);

describe("shedding at the webhook door", () => {
  it("answers 503 with Retry-After past maxInflight, counts, logs once a window, and serves the next delivery after the burst", async () => {
    const door = await startDoor(2);
    const held = [deliver(door.port, "held-1"), deliver(door.port, "held-2")];
    await eventually("both held deliveries at the handlers", () => (door.received.length === 2 ? true : undefined));

    const shed = await Promise.all(["shed-1", "shed-2", "shed-3"].map((id) => deliver(door.port, id)));
    for (const answer of shed) {
      expect(answer).toEqual({
        status: 503,
        retryAfter: String(SHED_RETRY_AFTER_SECONDS),
        text: `${JSON.stringify({ error: "too many deliveries in flight" })}\n`,
      });
    }
    expect(SHED_RETRY_AFTER_SECONDS).toBe(5);
    expect(door.received).toEqual(["held-1", "held-2"]);
    expect(door.ledger.total).toBe(3);
    expect(door.ledger.shedding).toBe(true);
    // The ids are kept once each body, drained after the 503, verified.
    await eventually("the three shed ids verified", () => (door.ledger.recentIds().length === 3 ? true : undefined));
    expect(door.ledger.recentIds().sort()).toEqual(["shed-1", "shed-2", "shed-3"]);
    // The first shed is said at once (before any body verified); the rest wait for the window to close.
    expect(shedLines(door.log)).toHaveLength(1);
    expect(shedLines(door.log)[0]).toEqual({ shed: 1, shedTotal: 1, deliveryIds: [] });
    expect(door.clock.timers.map((timer) => timer.ms)).toEqual([1000]);

    door.clock.fire();
    expect(shedLines(door.log)).toHaveLength(2);
    expect(shedLines(door.log)[1]).toEqual({ shed: 2, shedTotal: 3, deliveryIds: door.ledger.recentIds() });
    expect(door.quiet).toEqual([]);
    // A window with nothing shed ends the episode: quiet is called, and no line is written.
    door.clock.fire();
    expect(shedLines(door.log)).toHaveLength(2);
    expect(door.quiet).toEqual([3]);
    expect(door.ledger.shedding).toBe(false);
    expect(door.clock.timers).toEqual([]);

    door.release();
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
    expect(await deliver(door.port, "after")).toMatchObject({ status: 200, text: "ok\n" });
    expect(door.received).toEqual(["held-1", "held-2", "after"]);
    // Nothing shed, nothing logged as a refusal.
    expect(door.log.lines.filter((line) => line.message === "webhook delivery refused")).toEqual([]);
  });

  it("sheds before the body is read: a delivery whose body never comes is answered at once", async () => {
    const door = await startDoor(1, 30);
    const held = deliver(door.port, "held");
    await eventually("the held delivery at the handlers", () => (door.received.length === 1 ? true : undefined));
    expect(await deliver(door.port, "no-body", true)).toMatchObject({ status: 503, retryAfter: "30" });
    expect(door.ledger.total).toBe(1);
    // A body that never came never verified: its id is not kept.
    expect(door.ledger.recentIds()).toEqual([]);
    door.release();
    expect((await held).status).toBe(200);
  });

  it("frees the slot of a refused delivery, and keeps counting a delivery without an id", async () => {
    const door = await startDoor(1);
    const refused = await new Promise<number>((resolve, reject) => {
      const request = httpRequest({
        host: "127.0.0.1",
        port: door.port,
        path: PATH,
        method: "POST",
        headers: { "content-type": "application/json", "x-github-event": "issues", "x-github-delivery": "bad", "x-hub-signature-256": "sha256=00" },
      });
      request.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on("error", reject);
      request.end("{}");
    });
    expect(refused).toBe(400);
    const held = deliver(door.port, "held");
    await eventually("the held delivery at the handlers", () => (door.received.length === 1 ? true : undefined));
    const anonymous = await new Promise<number>((resolve, reject) => {
      const request = httpRequest({ host: "127.0.0.1", port: door.port, path: PATH, method: "POST", headers: { "content-type": "application/json" } });
      request.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on("error", reject);
      request.end("{}");
    });
    expect(anonymous).toBe(503);
    expect(door.ledger.total).toBe(1);
    expect(door.ledger.recentIds()).toEqual([]);
    door.release();
    expect((await held).status).toBe(200);
  });
});

describe("ShedLedger", () => {
  it("keeps the newest ids only, names at most SHED_IDS_LOGGED in a line, and ends an episode without onQuiet", () => {
    const log = new RecordingLog();
    const clock = new HandClock();
    const ledger = new ShedLedger({ log, clock, keepIds: 3 });
    for (let index = 0; index < 30; index += 1) {
      ledger.record();
      ledger.verified(`d${index}`);
    }
    expect(ledger.recentIds()).toEqual(["d27", "d28", "d29"]);
    clock.fire();
    const lines = shedLines(log);
    expect(lines).toHaveLength(2);
    expect(lines[1]?.shed).toBe(29);
    expect(lines[1]?.deliveryIds).toHaveLength(SHED_IDS_LOGGED);
    expect(lines[1]?.deliveryIds).toEqual(Array.from({ length: SHED_IDS_LOGGED }, (_, index) => `d${index}`));
    expect(SHED_IDS_KEPT).toBe(1000);
    // A quiet window with no onQuiet (the App without redelivery) ends the episode, and says nothing.
    expect(ledger.shedding).toBe(true);
    clock.fire();
    expect(ledger.shedding).toBe(false);
    expect(clock.timers).toEqual([]);
    expect(shedLines(log)).toHaveLength(2);
    ledger.verified("d30");
    expect(ledger.recentIds()).toEqual(["d28", "d29", "d30"]);
  });

  it("opens a new episode after a quiet one, logging its first shed at once", () => {
    const log = new RecordingLog();
    const clock = new HandClock();
    let quiet = 0;
    const ledger = new ShedLedger({
      log,
      clock,
      everyMs: 250,
      onQuiet: () => {
        quiet += 1;
      },
    });
    ledger.record();
    ledger.verified("a");
    clock.fire();
    expect(quiet).toBe(1);
    ledger.record();
    // An id verified after its episode's last line is named in the next episode's first.
    expect(shedLines(log).map((line) => line.deliveryIds)).toEqual([[], ["a"]]);
    expect(clock.timers.map((timer) => timer.ms)).toEqual([250]);
  });
});
