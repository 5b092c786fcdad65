import { mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmdirSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { Appender, type AppenderOptions } from "../../../src/queue/wal/appender.js";
import { tempDir } from "../helpers.js";

/** Gates made by a test: all opened after it, so a failed test leaves no sync held. */
const gates: Array<() => void> = [];

/** A gate a test opens by hand: the background sync waits on it. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => (open = resolve));
  gates.push(open);
  return { wait, open };
}

/** Whether a promise has settled, after the pending callbacks of this turn ran (it cannot while a gate holds it). */
async function isDone(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let turn = 0; turn < 5; turn += 1) await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
}

describe("write-ahead log appender", () => {
  let dir = "";
  let remove: () => Promise<void> = async () => undefined;
  const appenders: Appender[] = [];
  let events: string[] = [];

  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-wal-appender-"));
    events = [];
  });

  afterEach(async () => {
    for (const open of gates.splice(0)) open();
    for (const appender of appenders.splice(0)) await appender.close().catch(() => undefined);
    await remove();
  });

  const pathOf = (segment: number): string => join(dir, `seg.${segment}.log`);
  const text = (segment: number): string => readFileSync(pathOf(segment), "utf8");
  const files = (): string[] => readdirSync(dir).sort();

  function appender(segmentBytes = 1 << 20, options: AppenderOptions = {}, firstSegment?: number): Appender {
    const made = new Appender(
      pathOf,
      segmentBytes,
      { opening: (n) => events.push(`opening ${n}`), sealed: (n) => events.push(`sealed ${n}`) },
      firstSegment,
      options,
    );
    appenders.push(made);
    return made;
  }

  /** A datasync that counts its calls and how many ran at once, each waiting for `hold` (when set). */
  function countingSync(): { options: AppenderOptions; calls: () => number; most: () => number; hold: (g: Promise<void> | undefined) => void } {
    let calls = 0;
    let now = 0;
    let most = 0;
    let held: Promise<void> | undefined;
    return {
      options: {
        datasync: async (handle: FileHandle) => {
          calls += 1;
          now += 1;
          most = Math.max(most, now);
          try {
            await held;
            await handle.datasync();
          } finally {
            now -= 1;
          }
        },
      },
      calls: () => calls,
      most: () => most,
      hold: (g) => (held = g),
    };
  }

  it("writes the lines asked in one turn as one batch, in order, to the first segment", async () => {
    const log = appender();
    expect(log.latest).toBe(0);
    expect(await Promise.all([log.append("a\n"), log.append("b\n"), log.append("c\n")])).toEqual([1, 1, 1]);
    expect(text(1)).toBe("a\nb\nc\n");
    expect(events).toEqual(["opening 1"]);
    expect(log.latest).toBe(1);
    await log.close();
    expect(events).toEqual(["opening 1", "sealed 1"]);
    await expect(log.append("d\n")).rejects.toThrow("the write-ahead log is closed");
    expect(text(1)).toBe("a\nb\nc\n");
  });

  it("starts at the segment it is given", async () => {
    const log = appender(1 << 20, {}, 7);
    expect(log.latest).toBe(6);
    expect(await log.append("x\n")).toBe(7);
    expect(files()).toEqual(["seg.7.log"]);
  });

  it("answers a line once written, before its sync, and settles only after the sync", async () => {
    const sync = countingSync();
    const hold = gate();
    sync.hold(hold.wait);
    const log = appender(1 << 20, sync.options);
    expect(await log.append("a\n")).toBe(1);
    expect(text(1)).toBe("a\n");
    const settled = log.settled();
    const closed = log.close();
    expect(await isDone(settled)).toBe(false);
    expect(await isDone(closed)).toBe(false);
    expect(events).toEqual(["opening 1"]);
    hold.open();
    await settled;
    await closed;
    expect(events).toEqual(["opening 1", "sealed 1"]);
    expect(sync.calls()).toBeGreaterThanOrEqual(1);
  });

  it("answers a line asked synced only once its batch is synced", async () => {
    const sync = countingSync();
    const hold = gate();
    sync.hold(hold.wait);
    const log = appender(1 << 20, sync.options);
    const plain = log.append("a\n");
    const synced = log.append("b\n", true);
    expect(await plain).toBe(1);
    expect(await isDone(synced)).toBe(false);
    expect(text(1)).toBe("a\nb\n");
    hold.open();
    expect(await synced).toBe(1);
  });

  it("syncs one batch at a time, one sync covering every batch written while the previous one ran", async () => {
    const sync = countingSync();
    const hold = gate();
    sync.hold(hold.wait);
    const log = appender(1 << 20, sync.options);
    await log.append("a\n");
    // The first batch's sync is held: the next batches are written and answered meanwhile.
    await log.append("b\n");
    await log.append("c\n");
    expect(text(1)).toBe("a\nb\nc\n");
    hold.open();
    await log.settled();
    // a; then b and c together.
    expect(sync.calls()).toBe(2);
    expect(await log.append("d\n", true)).toBe(1);
    expect(sync.calls()).toBe(3);
    expect(sync.most()).toBe(1);
  });

  /** The segment files this process holds open. */
  const openSegments = (): string[] =>
    readdirSync("/proc/self/fd").flatMap((fd) => {
      try {
        const target = readlinkSync(join("/proc/self/fd", fd));
        return target.startsWith(`${realpathSync(dir)}/`) ? [target] : [];
      } catch {
        return [];
      }
    });

  it("rolls to a new segment once one holds segmentBytes, closing the sealed one after its sync", async () => {
    const sync = countingSync();
    // The second line brings segment 1 to exactly its size.
    const log = appender(6, sync.options);
    expect(await log.append("ab\n")).toBe(1);
    expect(await log.append("cd\n")).toBe(1);
    expect(events).toEqual(["opening 1", "sealed 1"]);
    expect(await log.append("ef\n", true)).toBe(2);
    expect(events).toEqual(["opening 1", "sealed 1", "opening 2"]);
    expect([text(1), text(2)]).toEqual(["ab\ncd\n", "ef\n"]);
    await log.settled();
    expect(sync.most()).toBe(1);
    expect(openSegments()).toEqual([join(realpathSync(dir), "seg.2.log")]);
    await log.close();
    expect(events).toEqual(["opening 1", "sealed 1", "opening 2", "sealed 2"]);
    expect(openSegments()).toEqual([]);
  });

  it("rejects a whole batch whose segment cannot be written, and writes the next one to a new segment", async () => {
    const log = appender();
    mkdirSync(pathOf(1));
    const batch = [log.append("a\n"), log.append("b\n", true)];
    await expect(batch[0]).rejects.toMatchObject({ code: "EEXIST" });
    await expect(batch[1]).rejects.toMatchObject({ code: "EEXIST" });
    rmdirSync(pathOf(1));
    expect(await log.append("c\n", true)).toBe(2);
    expect(files()).toEqual(["seg.2.log"]);
    expect(text(2)).toBe("c\n");
  });

  it("gives up the open segment when its sync fails, refuses the next batch with the failure, then goes on in a new segment", async () => {
    let fail = true;
    const log = appender(1 << 20, {
      datasync: async (handle) => {
        if (fail) {
          fail = false;
          throw Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
        }
        await handle.datasync();
      },
    });
    const plain = log.append("a\n");
    const synced = log.append("b\n", true);
    // Written: answered before the sync failed.
    expect(await plain).toBe(1);
    await expect(synced).rejects.toMatchObject({ code: "EIO" });
    await log.settled();
    expect(events).toEqual(["opening 1", "sealed 1"]);
    // The next batch is told, whole.
    const told = [log.append("c\n"), log.append("d\n")];
    await expect(told[0]).rejects.toMatchObject({ code: "EIO" });
    await expect(told[1]).rejects.toMatchObject({ code: "EIO" });
    // Told once: the following lines go to a new segment.
    expect(await log.append("e\n", true)).toBe(2);
    expect([text(1), text(2)]).toEqual(["a\nb\n", "e\n"]);
    expect(events).toEqual(["opening 1", "sealed 1", "opening 2"]);
  });

  it("keeps the open segment when a failed sync was of a sealed one, and still tells the next batch", async () => {
    let calls = 0;
    const hold = gate();
    const log = appender(4, {
      datasync: async (handle) => {
        calls += 1;
        if (calls === 1) {
          await hold.wait;
          throw Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
        }
        await handle.datasync();
      },
    });
    // Fills segment 1 (sealed); its sync is held, then fails.
    expect(await log.append("abcd\n")).toBe(1);
    // Written to segment 2 while segment 1's sync is held.
    expect(await log.append("e\n")).toBe(2);
    hold.open();
    await log.settled();
    expect(events).toEqual(["opening 1", "sealed 1", "opening 2"]);
    await expect(log.append("f\n")).rejects.toMatchObject({ code: "EIO" });
    // Segment 2 was synced by a later sync and stays open.
    expect(await log.append("g\n", true)).toBe(2);
    expect(text(2)).toBe("e\ng\n");
  });

  it("settles at once when nothing was asked, and closes without a segment", async () => {
    const log = appender();
    await log.settled();
    await log.close();
    expect(events).toEqual([]);
    expect(files()).toEqual([]);
  });

  it("writes a batch far larger than one write returns, whole", async () => {
    const log = appender();
    const line = `${"x".repeat(1 << 16)}\n`;
    const lines = Array.from({ length: 64 }, (_, n) => `${n} ${line}`);
    expect(new Set(await Promise.all(lines.map((l) => log.append(l, true))))).toEqual(new Set([1]));
    expect(text(1)).toBe(lines.join(""));
  });
});
