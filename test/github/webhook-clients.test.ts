/**
 * The door against one greedy client, with real sockets on loopback: slow bodies from one
 * address take at most their share of the in-flight slots (before, they took all of them and
 * GitHub's deliveries were shed), their slots come back at the body deadline, and ids that a
 * sender without the webhook secret puts in `X-GitHub-Delivery` never enter the shed list
 * (before, they filled it).
 */
import { createHmac } from "node:crypto";
import { createServer, request as httpRequest, type ClientRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "@jest/globals";
import { clientKey, defaultMaxInflightPerClient, guardWebhooks, ShedLedger } from "../../src/github/door/index.js";
import { eventually } from "../support/poll.js";
import { RecordingLog } from "./fake-setup.js";

const SECRET = "clients-test-secret";
const PATH = "/api/github/webhooks";
const GITHUB = "127.0.0.2"; // loopback is a /8: a second client address on this machine
const ATTACKER = "127.0.0.1";
const sign = (body: string, secret = SECRET): string => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

const servers: Server[] = [];
const open: ClientRequest[] = [];
afterEach(async () => {
  for (const request of open.splice(0)) request.destroy();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function startDoor(options: {
  maxInflight: number;
  bodyDeadlineMs: number;
  hold?: Promise<void>;
}): Promise<{ port: number; ledger: ShedLedger; received: string[] }> {
  const log = new RecordingLog();
  const ledger = new ShedLedger({ log });
  const received: string[] = [];
  const guard = guardWebhooks(async () => false, {
    path: PATH,
    secret: SECRET,
    log,
    bodyDeadlineMs: options.bodyDeadlineMs,
    receive: async (event) => {
      received.push(event.id);
      await options.hold;
    },
    shed: { maxInflight: options.maxInflight, ledger },
  });
  const server = createServer((request, response) => void guard(request, response));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  return { port: (server.address() as AddressInfo).port, ledger, received };
}

/** Posts delivery `id` from `from`; `body: "withhold"` sends the headers and never the body. */
function deliver(port: number, from: string, id: string, options: { withhold?: boolean; secret?: string } = {}): Promise<number> {
  const body = JSON.stringify({ action: "labeled", id });
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: "127.0.0.1",
      port,
      path: PATH,
      method: "POST",
      localAddress: from,
      agent: false,
      headers: {
        "content-type": "application/json",
        "content-length": String(body.length),
        "x-github-event": "issues",
        "x-github-delivery": id,
        "x-hub-signature-256": sign(body, options.secret),
      },
    });
    open.push(request);
    request.on("response", (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", (error) => (options.withhold ? undefined : reject(error)));
    if (options.withhold) request.flushHeaders();
    else request.end(body);
  });
}

describe("the door's slots per client", () => {
  it("gives one address a quarter of the slots by default, so GitHub's delivery is served while it sends slow bodies", async () => {
    const door = await startDoor({ maxInflight: 8, bodyDeadlineMs: 600_000 });
    expect(defaultMaxInflightPerClient(8)).toBe(2);
    expect(defaultMaxInflightPerClient(256)).toBe(64);
    const slow = Array.from({ length: 8 }, (_, index) => deliver(door.port, ATTACKER, `slow-${index}`, { withhold: true }));
    // Past its two slots the attacker is shed at once; its first two bodies never come.
    expect(await Promise.all(slow.slice(2))).toEqual([503, 503, 503, 503, 503, 503]);
    expect(door.ledger.total).toBe(6);

    expect(await deliver(door.port, GITHUB, "github-1")).toBe(200);
    expect(door.received).toEqual(["github-1"]);
  });

  it("takes a slot back when a slow body misses its deadline", async () => {
    const door = await startDoor({ maxInflight: 4, bodyDeadlineMs: 300 });
    const slow = deliver(door.port, ATTACKER, "slow", { withhold: true });
    expect(await slow).toBe(408);
    // The slot is free again: the same client is served.
    expect(await deliver(door.port, ATTACKER, "after")).toBe(200);
    expect(door.ledger.total).toBe(0);
  });
});

describe("the shed list", () => {
  it("keeps only ids whose signature verified: a sender without the secret cannot fill it", async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    const door = await startDoor({ maxInflight: 1, bodyDeadlineMs: 600_000, hold });
    const held = deliver(door.port, GITHUB, "held");
    await eventually("the held delivery at the handler", () => (door.received.length === 1 ? true : undefined));

    const forged = await Promise.all(
      Array.from({ length: 40 }, (_, index) => deliver(door.port, ATTACKER, `attacker-chosen-${index}`, { secret: "not-the-secret" })),
    );
    expect(new Set(forged)).toEqual(new Set([503]));
    expect(await deliver(door.port, GITHUB, "github-shed")).toBe(503);
    expect(door.ledger.total).toBe(41);
    await eventually("the signed shed delivery's id kept", () => (door.ledger.recentIds().includes("github-shed") ? true : undefined));
    expect(door.ledger.recentIds()).toEqual(["github-shed"]);

    release();
    expect(await held).toBe(200);
  });
});

describe("clientKey", () => {
  it("is an IPv4 address as it is, also IPv4-mapped, and the /64 of an IPv6 address", () => {
    expect(clientKey("203.0.113.9")).toBe("203.0.113.9");
    expect(clientKey("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(clientKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:db8:1:2::99")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:0db8:0001:0002::1")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientKey("::1")).toBe("0:0:0:0::/64");
    expect(clientKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(clientKey(undefined)).toBe("(unknown)");
  });
});
