/**
 * The webhook door on the status page, rendered from data: what was shed, the newest shed
 * delivery ids (bounded, escaped: a sender chose them), and the redelivery sweeps' state.
 */
import { describe, expect, it } from "@jest/globals";
import { DOOR_ID_CHARS, DOOR_IDS_SHOWN, doorStatus, type DoorStatus, type SweepState } from "../../src/github/door/index.js";
import { renderStatusPage, type StatusReport } from "../../src/status/index.js";

const report = (door?: DoorStatus): StatusReport => ({
  generatedAt: "2026-12-02T20:00:00.000Z",
  jobs: [],
  runs: [],
  quarantined: [],
  undelivered: [],
  reporting: [],
  app: { running: true, pid: 1 },
  queued: [],
  running: [],
  ...(door ? { door } : {}),
});
const page = (door?: DoorStatus): string => renderStatusPage(report(door), { webBase: "https://github.com" });
/** The door section's paragraph: its state and what the sweeps say. */
const said = (html: string): string => /<h2>Webhook door[^<]*<\/h2><p>(.*?)<\/p>/.exec(html)?.[1] ?? "(no door section)";
const ledger = (total: number, shedding: boolean, ids: string[]) => ({ total, shedding, recentIds: () => [...ids] });
const last = { listed: 12, asked: 3, failed: 1, complete: true, endedAt: "2026-12-02T19:59:00.000Z" };
const sweeps = (state: Partial<SweepState>): SweepState => ({ running: false, queued: false, ...state });

describe("doorStatus", () => {
  it("shows the newest ids first, at most DOOR_IDS_SHOWN, each cut to DOOR_ID_CHARS", () => {
    const ids = Array.from({ length: 70 }, (_, index) => `d${index}`);
    const door = doorStatus(ledger(70, true, ids));
    expect(DOOR_IDS_SHOWN).toBe(50);
    expect(door.shed).toEqual({ total: 70, shedding: true, recentIds: ids.slice(20).reverse() });
    expect(door).not.toHaveProperty("redelivery");

    expect(DOOR_ID_CHARS).toBe(80);
    const long = "x".repeat(DOOR_ID_CHARS + 1);
    const exact = "y".repeat(DOOR_ID_CHARS);
    expect(doorStatus(ledger(2, false, [long, exact])).shed.recentIds).toEqual([exact, `${"x".repeat(DOOR_ID_CHARS - 1)}…`]);
    expect(doorStatus(ledger(0, false, []), sweeps({ running: true }))).toEqual({
      shed: { total: 0, shedding: false, recentIds: [] },
      redelivery: { running: true, queued: false },
    });
  });
});

describe("the status page's webhook door", () => {
  it("is absent without a door (no webhook secret)", () => {
    expect(page()).not.toContain("Webhook door");
  });

  it("names the shed ids, escaped, newest first, with the count", () => {
    const html = page(doorStatus(ledger(9, true, ["older", "<img src=x>", "newest"]), sweeps({})));
    expect(html).toContain("<h2>Webhook door (9 shed)</h2>");
    expect(html).toContain("Newest shed delivery ids, newest first (3 of 9):</p><pre>newest\n&lt;img src=x&gt;\nolder</pre>");
    expect(html).not.toContain("<img");
    expect(said(html)).toBe('<span class="blocked">shedding now</span>. Redelivery: a sweep follows once shedding stops; none has ended yet.');
  });

  it("says nothing was shed, and what each state of the sweeps is", () => {
    const quiet = (state?: SweepState): string => said(page(doorStatus(ledger(0, false, []), state)));
    expect(page(doorStatus(ledger(0, false, [])))).toContain(
      '<h2>Webhook door (0 shed)</h2><p><span class="completed">not shedding</span>. Redelivery: off: shed deliveries are not asked for again.</p><p class="empty">No delivery was shed.</p>',
    );
    expect(quiet(sweeps({}))).toBe('<span class="completed">not shedding</span>. Redelivery: no sweep is running; none has ended yet.');
    expect(quiet(sweeps({ running: true, last }))).toBe(
      '<span class="completed">not shedding</span>. Redelivery: a sweep is running; the last ended 2026-12-02T19:59:00.000Z: 12 deliveries listed, 3 asked for again, 1 refused by GitHub.',
    );
    expect(quiet(sweeps({ running: true, queued: true }))).toBe(
      '<span class="completed">not shedding</span>. Redelivery: a sweep is running, and another follows it; none has ended yet.',
    );
    expect(quiet(sweeps({ last: { ...last, complete: false } }))).toBe(
      '<span class="completed">not shedding</span>. Redelivery: no sweep is running; the last ended 2026-12-02T19:59:00.000Z: the deliveries could not be listed.',
    );
  });
});
