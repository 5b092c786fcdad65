/** Where the harness keeps its data, and the per-repository lock of git's shared state. */
import { mkdirSync, symlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { cacheDir, harnessHome, logsDir, RepoLocks } from "../../src/workspace/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

describe("harnessHome", () => {
  it("is HARNESS_HOME made absolute, else ~/.harness from HOME, else from the user's home folder", () => {
    expect(harnessHome({ HARNESS_HOME: "/srv/harness", HOME: "/home/x" })).toBe("/srv/harness");
    expect(harnessHome({ HARNESS_HOME: "data/harness" })).toBe(resolve("data/harness"));
    expect(harnessHome({ HARNESS_HOME: "   ", HOME: "/home/x" })).toBe("/home/x/.harness");
    expect(harnessHome({ HARNESS_HOME: "", HOME: "/home/x" })).toBe("/home/x/.harness");
    expect(harnessHome({ HOME: "" })).toBe(join(homedir(), ".harness"));
    expect(harnessHome({})).toBe(join(homedir(), ".harness"));
  });

  it("holds the caches and the logs", () => {
    expect(cacheDir("/h", "npm")).toBe("/h/cache/npm");
    expect(cacheDir("/h", "cargo")).toBe("/h/cache/cargo");
    expect(logsDir("/h")).toBe("/h/logs");
  });
});

describe("RepoLocks", () => {
  /** A gate the test opens by hand, so the order of events never depends on timing. */
  const gate = (): { wait: Promise<void>; open: () => void } => {
    let open!: () => void;
    const wait = new Promise<void>((resolve) => (open = resolve));
    return { wait, open };
  };

  it("runs one repository's work one at a time, in the order asked, under any spelling of its path", async () => {
    const dir = makeTempDir();
    const repo = join(dir, "repo");
    mkdirSync(repo);
    symlinkSync(repo, join(dir, "link"));
    const locks = new RepoLocks();
    const events: string[] = [];
    const first = gate();
    const a = locks.with(repo, async () => {
      events.push("a start");
      await first.wait;
      events.push("a end");
      return "a";
    });
    const b = locks.with(join(dir, "link"), async () => {
      events.push("b");
      return "b";
    });
    const c = locks.with(`${repo}/`, async () => {
      events.push("c");
      return "c";
    });
    // Another repository is not held up.
    await locks.with(join(dir, "other"), async () => events.push("other"));
    expect(events).toEqual(["a start", "other"]);
    first.open();
    expect(await Promise.all([a, b, c])).toEqual(["a", "b", "c"]);
    expect(events).toEqual(["a start", "other", "a end", "b", "c"]);
  });

  it("a holder asking while a later one runs waits for that one, not only for the first", async () => {
    const repo = makeTempDir();
    const locks = new RepoLocks();
    const events: string[] = [];
    const first = gate();
    const second = gate();
    const secondStarted = gate();
    const a = locks.with(repo, async () => {
      await first.wait;
      events.push("a");
    });
    const b = locks.with(repo, async () => {
      events.push("b start");
      secondStarted.open();
      await second.wait;
      events.push("b end");
    });
    first.open();
    await secondStarted.wait;
    // The first holder is gone; its release must not have dropped the second one's place.
    const c = locks.with(repo, async () => events.push("c"));
    await new Promise((resolve) => setImmediate(resolve));
    second.open();
    await Promise.all([a, b, c]);
    expect(events).toEqual(["a", "b start", "b end", "c"]);
  });

  it("keeps folders that do not exist apart: each is its own lock", async () => {
    const dir = makeTempDir();
    const locks = new RepoLocks();
    const held = gate();
    const events: string[] = [];
    const a = locks.with(join(dir, "missing-a"), async () => {
      await held.wait;
      events.push("a");
    });
    await locks.with(join(dir, "missing-b"), async () => events.push("b"));
    held.open();
    await a;
    expect(events).toEqual(["b", "a"]);
  });

  it("releases the lock when the work fails, and keeps no entry once the queue is empty", async () => {
    const locks = new RepoLocks();
    const repo = makeTempDir();
    await expect(locks.with(repo, async () => Promise.reject(new Error("git failed")))).rejects.toThrow("git failed");
    expect(await locks.with(repo, async () => "after")).toBe("after");
    expect((locks as unknown as { tails: Map<string, unknown> }).tails.size).toBe(0);
  });
});
