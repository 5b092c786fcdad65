import { inSlots, TaskSlots } from "../../src/pipeline/index.js";

/** Work items whose end the test decides, so how many run at once is observed, not timed. */
function gatedWork() {
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  let running = 0;
  let most = 0;
  const work = (item: string): Promise<string> => {
    started.push(item);
    running += 1;
    most = Math.max(most, running);
    return new Promise<string>((resolve) =>
      ends.set(item, () => {
        running -= 1;
        resolve(`${item} done`);
      }),
    );
  };
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  const end = async (item: string) => {
    ends.get(item)?.();
    await settle();
  };
  return { started, work, end, settle, most: () => most, running: () => running };
}

describe("the runner's task slots", () => {
  it("hand out free slots, make a waiter first in line, and give a released slot to the waiter before anyone who only asks", async () => {
    const slots = new TaskSlots(1);
    const first = slots.tryAcquire();
    expect([first !== undefined, slots.free, slots.inUse]).toEqual([true, 0, 1]);
    expect(slots.tryAcquire()).toBeUndefined();
    let granted = false;
    const waiting = slots.acquire().then((lease) => {
      granted = true;
      return lease;
    });
    const heard: number[] = [];
    slots.onRelease(() => heard.push(slots.free));
    first?.release();
    first?.release();
    const second = await waiting;
    expect([granted, slots.inUse, heard]).toEqual([true, 1, [0]]);
    second.release();
    expect(slots.free).toBe(1);
  });

  it("stop waiting when the story is stopped", async () => {
    const slots = new TaskSlots(0);
    const stop = new AbortController();
    const waiting = slots.acquire(stop.signal);
    stop.abort(new Error("stopped"));
    await expect(waiting).rejects.toThrow("stopped");
    expect(() => new TaskSlots(-1)).toThrow(/whole number/);
  });

  it("run a wave's items one at a time when no slot is free, and more at once as slots free up, never above the limit", async () => {
    const slots = new TaskSlots(2);
    const other = slots.tryAcquire();
    const another = slots.tryAcquire();
    const gate = gatedWork();
    const all = inSlots(["a", "b", "c", "d", "e"], 3, slots, gate.work);
    await gate.settle();
    // Another story holds both slots: only the story's own slot runs.
    expect(gate.started).toEqual(["a"]);
    other?.release();
    await gate.settle();
    expect(gate.started).toEqual(["a", "b"]);
    another?.release();
    await gate.settle();
    expect([gate.started, gate.running()]).toEqual([["a", "b", "c"], 3]);
    // At the limit (3), a free slot is left alone.
    expect(slots.free).toBe(0);
    await gate.end("a");
    expect(gate.started).toEqual(["a", "b", "c", "d"]);
    for (const item of ["b", "c", "d", "e"]) await gate.end(item);
    expect(await all).toEqual(["a done", "b done", "c done", "d done", "e done"]);
    expect([gate.most(), slots.free]).toEqual([3, 2]);
  });

  it("start nothing more once an item failed, and fail once the running ones ended, their slots given back", async () => {
    const slots = new TaskSlots(1);
    const gate = gatedWork();
    const all = inSlots(["a", "b", "c"], 2, slots, (item) => (item === "b" ? Promise.reject(new Error("b broke")) : gate.work(item)));
    const failed = all.then(
      () => "resolved",
      (error: Error) => error.message,
    );
    await gate.settle();
    expect(gate.started).toEqual(["a"]);
    await gate.end("a");
    expect([await failed, gate.started, slots.free]).toEqual(["b broke", ["a"], 1]);
  });
});
