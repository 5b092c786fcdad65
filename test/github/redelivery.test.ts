/**
 * The redelivery sweep against the strict fake GitHub: each failed delivery newer than the bound
 * whose event has no successful delivery is asked for again, once; pages are followed; GitHub's
 * failures are logged and tried again at the next sweep.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { fakeOctokit } from "../support/fake-github/index.js";
import { ASKED_KEPT, nextCursor, RedeliverySweeper, toRedeliver, type HookDelivery } from "../../src/github/door/index.js";
import { RecordingLog } from "./fake-setup.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

const at = (second: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const delivery = (id: number, guid: string, status: number, second = id): HookDelivery => ({ id, guid, delivered_at: at(second), status_code: status });

describe("toRedeliver", () => {
  it("picks each GUID's newest failed delivery, skipping a GUID with any 2xx and ids already asked for", () => {
    const list = [
      delivery(9, "settled", 299),
      delivery(8, "settled", 503),
      delivery(7, "twice", 500),
      delivery(6, "twice", 0),
      delivery(5, "asked", 503),
      delivery(4, "unanswered", 0),
      delivery(3, "ok", 200),
      delivery(2, "timeout", 408),
      delivery(1, "limited", 429),
    ];
    expect(toRedeliver(list, new Set([5])).map((found) => found.id)).toEqual([7, 4, 2, 1]);
    // A 2xx settles its event even when a later delivery of it failed (a redelivery asked for by hand); 300 is no success.
    const later = [delivery(14, "taken", 503), delivery(13, "taken", 200), delivery(12, "moved", 502), delivery(11, "moved", 300)];
    expect(toRedeliver(later, new Set()).map((found) => found.id)).toEqual([12]);
  });

  it("leaves a delivery the App refused on purpose (4xx other than 408 and 429, 1xx, 3xx): its body would be refused again", () => {
    const refused = [400, 401, 404, 413, 415, 422, 199, 300, 499].map((status, index) => delivery(index + 1, `g${index}`, status));
    expect(toRedeliver(refused, new Set())).toEqual([]);
    // The newest answer decides: a 503 before a 400 of the same event is not asked for again.
    expect(toRedeliver([delivery(2, "g", 400, 2), delivery(1, "g", 503, 1)], new Set())).toEqual([]);
    expect(toRedeliver([delivery(2, "g", 502, 2), delivery(1, "g", 400, 1)], new Set()).map((found) => found.id)).toEqual([2]);
    expect(toRedeliver([delivery(1, "g", 500, 1), delivery(2, "h", 599, 2)], new Set()).map((found) => found.id)).toEqual([1, 2]);
  });

  it("takes the later delivery of a GUID whatever the order given, and the higher id within the same second", () => {
    expect(toRedeliver([delivery(1, "g", 503, 1), delivery(2, "g", 503, 5)], new Set()).map((found) => found.id)).toEqual([2]);
    expect(toRedeliver([delivery(2, "g", 503, 5), delivery(1, "g", 503, 1)], new Set()).map((found) => found.id)).toEqual([2]);
    expect(toRedeliver([delivery(3, "g", 503, 4), delivery(4, "g", 503, 4)], new Set()).map((found) => found.id)).toEqual([4]);
    expect(toRedeliver([delivery(4, "g", 503, 4), delivery(3, "g", 503, 4)], new Set()).map((found) => found.id)).toEqual([4]);
    // The time decides first: a higher id delivered earlier is not the newer.
    expect(toRedeliver([delivery(4, "g", 503, 9), delivery(5, "g", 503, 1)], new Set()).map((found) => found.id)).toEqual([4]);
  });
});

describe("nextCursor", () => {
  it("reads the cursor of rel=next only", () => {
    expect(nextCursor('<https://x/app/hook/deliveries?per_page=100&cursor=abc>; rel="next", <https://x/app/hook/deliveries?cursor=zzz>; rel="prev"')).toBe(
      "abc",
    );
    expect(nextCursor('<https://x/app/hook/deliveries?cursor=zzz>; rel="prev", <https://x/app/hook/deliveries?cursor=def>; rel="next"')).toBe("def");
    expect(nextCursor('<https://x/app/hook/deliveries?cursor=zzz>; rel="prev"')).toBeUndefined();
    expect(nextCursor('<https://x/app/hook/deliveries?page=2>; rel="next"')).toBeUndefined();
    expect(nextCursor('<https://x/app/hook/deliveries?cursor=ghi>;rel="next"')).toBe("ghi");
    expect(nextCursor('no link here; rel="next"')).toBeUndefined();
    expect(nextCursor(undefined)).toBeUndefined();
    expect(nextCursor("")).toBeUndefined();
  });
});

describe("RedeliverySweeper against the fake GitHub", () => {
  const gh = useFakeGitHub();
  let receiver: Server;
  /** The receiver answers 503 to a delivery id listed here, 200 otherwise. */
  const refuse = new Set<string>();
  /** The receiver holds its answer to a delivery id listed here until the test lets it go (GitHub lists a delivery once answered). */
  const hold = new Set<string>();
  const held: Array<() => void> = [];
  const got: string[] = [];

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const id = String(request.headers["x-github-delivery"]);
      got.push(id);
      request.resume();
      request.on("end", () => {
        const answer = (): void => void response.writeHead(refuse.has(id) ? 503 : 200).end();
        if (hold.has(id)) held.push(answer);
        else answer();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    gh.setWebhookUrl(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`);
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  const sweeperFor = (log: RecordingLog, options: { now?: () => number; withinMs?: number; maxPages?: number; keepAsked?: number } = {}): RedeliverySweeper =>
    new RedeliverySweeper({ appOctokit: async () => fakeOctokit(gh), log, ...options });

  it("asks once for every failed delivery across pages, then nothing more once they succeed", async () => {
    const taken = [];
    for (let index = 0; index < 105; index += 1) taken.push(gh.sendWebhook("issues", { action: "labeled", n: index }));
    await Promise.all(taken);
    const log = new RecordingLog();
    // Everything so far succeeded: nothing to ask.
    expect(await sweeperFor(log).sweep()).toEqual({ listed: 105, asked: 0, failed: 0, complete: true });

    const refused = [];
    for (let index = 0; index < 103; index += 1) {
      const guid = `refused-${index}`;
      refuse.add(guid);
      refused.push(gh.context.hook.send("issues", { action: "labeled", n: index }, guid));
    }
    await Promise.all(refused);
    const sweeper = sweeperFor(log);
    const first = await sweeper.sweep();
    expect(first).toEqual({ listed: 208, asked: 103, failed: 0, complete: true });
    await gh.webhooksIdle();
    // Asked once: the redeliveries, refused again, are not asked for by the same sweeper's next sweep…
    const redelivered = gh.hookDeliveries().filter((record) => record.redelivery);
    expect(redelivered).toHaveLength(103);
    expect(new Set(redelivered.map((record) => record.guid))).toEqual(new Set([...refuse]));
    // …but their new failed deliveries are; once the App takes them, no GUID is asked again.
    for (const guid of [...refuse]) refuse.delete(guid);
    const second = await sweeper.sweep();
    expect(second).toMatchObject({ asked: 103, failed: 0, complete: true });
    await gh.webhooksIdle();
    expect(await sweeper.sweep()).toMatchObject({ asked: 0, failed: 0, complete: true });
    expect(log.lines.filter((line) => line.level !== "info")).toEqual([]);
    expect(log.lines.map((line) => line.details)).toEqual([
      { listed: 208, asked: 103, failed: 0, complete: true },
      { listed: 311, asked: 103, failed: 0, complete: true },
    ]);
    gh.assertNoUnexpectedRequests();
  });

  it("reads no further than the bound, and no more pages than allowed", async () => {
    const guid = "old-failure";
    refuse.add(guid);
    await gh.context.hook.send("issues", { action: "labeled" }, guid);
    refuse.delete(guid);
    const log = new RecordingLog();
    // A clock a day ahead: every delivery is older than the bound.
    const ahead = sweeperFor(log, { now: () => Date.now() + 2 * 24 * 3600 * 1000 });
    expect(await ahead.sweep()).toEqual({ listed: 0, asked: 0, failed: 0, complete: true });
    const onePage = sweeperFor(log, { maxPages: 1 });
    const result = await onePage.sweep();
    expect(result.listed).toBe(100);
    expect(result.asked).toBe(1);
    await gh.webhooksIdle();
    // A delivery exactly at the bound is read; only older ones are not.
    const newest = gh.hookDeliveries().at(-1)?.deliveredAt ?? "";
    const atBound = sweeperFor(log, { now: () => Date.parse(newest) + 1000, withinMs: 1000 });
    const boundary = gh.hookDeliveries().filter((record) => record.deliveredAt === newest).length;
    expect(boundary).toBeGreaterThan(0);
    expect(await atBound.sweep()).toMatchObject({ listed: boundary, complete: true });
  });

  it("logs a listing GitHub refuses and an ask it refuses, and tries again at the next sweep", async () => {
    const guid = "flaky";
    refuse.add(guid);
    await gh.context.hook.send("issues", { action: "labeled" }, guid);
    refuse.delete(guid);
    const log = new RecordingLog();
    const sweeper = sweeperFor(log);
    const listing = gh.injectFailure({ method: "GET", path: /^\/api\/v3\/app\/hook\/deliveries$/, failure: { kind: "bad-gateway" } });
    expect(await sweeper.sweep()).toEqual({ listed: 0, asked: 0, failed: 0, complete: false });
    expect(sweeper.state().last).toMatchObject({ listed: 0, complete: false });
    listing.close();
    expect(log.lines.at(-1)).toMatchObject({
      level: "warn",
      message: "webhook redelivery: the deliveries could not be listed; the next sweep tries again",
      details: { err: { status: 502 } },
    });
    const asks = gh.injectFailure({ method: "POST", path: /\/attempts$/, failure: { kind: "bad-gateway" } });
    const refused = await sweeper.sweep();
    asks.close();
    expect(refused).toMatchObject({ asked: 0, failed: 1, complete: true });
    // A sweep whose every ask failed still says what it did.
    expect(log.lines.at(-1)).toMatchObject({ level: "info", message: "webhook redelivery: failed deliveries asked for again", details: { ...refused } });
    expect(log.lines.find((line) => line.message === "webhook redelivery: GitHub did not take the request; the next sweep tries again")?.details).toMatchObject(
      { deliveryId: guid },
    );
    expect(await sweeper.sweep()).toMatchObject({ asked: 1, failed: 0 });
    await gh.webhooksIdle();
    expect(
      gh
        .hookDeliveries()
        .filter((record) => record.guid === guid)
        .map((record) => record.statusCode),
    ).toEqual([503, 200]);
  });

  it("remembers at most keepAsked ids asked for: a forgotten one is asked for again while its redelivery is on its way", async () => {
    expect(ASKED_KEPT).toBe(10_000);
    const log = new RecordingLog();
    // What earlier tests left failed is asked for and taken first.
    await sweeperFor(log).sweep();
    await gh.webhooksIdle();
    for (const guid of ["kept-a", "kept-b"]) {
      refuse.add(guid);
      await gh.context.hook.send("issues", { action: "labeled" }, guid);
      refuse.delete(guid);
      hold.add(guid);
    }
    const remembering = sweeperFor(log, { keepAsked: 2 });
    const forgetful = sweeperFor(log, { keepAsked: 1 });
    for (const sweeper of [remembering, forgetful]) expect(await sweeper.sweep()).toMatchObject({ asked: 2, failed: 0 });
    // The redeliveries are held, so both failed deliveries are still each event's newest.
    expect(await remembering.sweep()).toMatchObject({ asked: 0, failed: 0 });
    expect(await forgetful.sweep()).toMatchObject({ asked: 1, failed: 0 });
    hold.clear();
    for (const answer of held.splice(0)) answer();
    await gh.webhooksIdle();
    expect(
      gh
        .hookDeliveries()
        .filter((record) => record.guid.startsWith("kept-") && record.redelivery)
        .map((record) => record.statusCode),
    ).toEqual([200, 200, 200, 200, 200]);
  });

  it("runs one sweep at a time: a sweep asked for meanwhile runs once after it; its state says which runs and what the last did", async () => {
    const log = new RecordingLog();
    const clock = Date.now();
    const sweeper = sweeperFor(log, { now: () => clock });
    const listings = (): number => gh.state.requests.filter((request) => request.route === "/app/hook/deliveries").length;
    const before = listings();
    expect(sweeper.state()).toEqual({ running: false, queued: false });
    const a = sweeper.sweep();
    expect(sweeper.state()).toEqual({ running: true, queued: false });
    const [b, c] = [sweeper.sweep(), sweeper.sweep()];
    expect(sweeper.state()).toEqual({ running: true, queued: true });
    expect(b).toBe(c);
    expect(a).not.toBe(b);
    const first = await a;
    expect(sweeper.state()).toEqual({ running: true, queued: false, last: { ...first, endedAt: new Date(clock).toISOString() } });
    const second = await b;
    expect(sweeper.state()).toEqual({ running: false, queued: false, last: { ...second, endedAt: new Date(clock).toISOString() } });
    // The state is a copy: changing it changes nothing.
    const seen = sweeper.state();
    if (seen.last) seen.last.asked = 99;
    expect(sweeper.state().last?.asked).toBe(second.asked);
    // Two sweeps, each reading every page.
    const pages = Math.ceil(gh.hookDeliveries().length / 100);
    expect(listings() - before).toBe(2 * pages);
    // A sweep asked for after both ended starts afresh.
    await sweeper.sweep();
    expect(listings() - before).toBe(3 * pages);
  });
});
