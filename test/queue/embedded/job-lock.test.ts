import { mkdir, open, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { exec } from "../../../src/exec/index.js";
import { acquireLock, liveHolder, newLockOwner, releaseLock, retireLockOwner, type LockOwner } from "../../../src/queue/job-lock.js";
import { tempDir } from "../helpers.js";

describe("acquireLock", () => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-lock-"));
  });
  afterEach(() => remove());

  /**
   * Two processes recover one dead lock: this one read it (and judged its owner dead) while the
   * other took it over. Made deterministic with a FIFO at the lock's path: this holder's read
   * blocks on it until the test has put the other's lock in place, then reads the dead lock.
   */
  it("gives a stale lock back when another holder took it over between the read and the move", async () => {
    const path = join(dir, "job.lock");
    const fifo = await exec(["mkfifo", path], { cwd: dir });
    expect(fifo.exitCode).toBe(0);
    const self = newLockOwner();
    const other = newLockOwner();
    try {
      const dead = JSON.stringify({ ...self, startTime: `${self.startTime}-an-earlier-life`, at: new Date().toISOString() });
      const theirs = `${JSON.stringify({ ...other, at: new Date().toISOString() })}`;
      const recovering = acquireLock(path, self);
      // Opening a FIFO for writing waits for its reader: this holder is now inside its read.
      const writer = await open(path, "w");
      await writeFile(join(dir, "theirs.tmp"), theirs);
      await rename(join(dir, "theirs.tmp"), path);
      await writer.writeFile(dead);
      await writer.close();

      expect(await recovering).toBe(false);
      expect(await readFile(path, "utf8")).toBe(theirs);
    } finally {
      retireLockOwner(self);
      retireLockOwner(other);
    }
  });

  it("takes over a lock whose holder is dead, and leaves one whose holder lives", async () => {
    const path = join(dir, "job.lock");
    const self = newLockOwner();
    const other = newLockOwner();
    try {
      await writeFile(path, JSON.stringify({ ...other, at: new Date().toISOString() }));
      expect(await acquireLock(path, self)).toBe(false);
      retireLockOwner(other);
      expect(await acquireLock(path, self)).toBe(true);
      expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ instance: self.instance });
    } finally {
      retireLockOwner(self);
    }
  });

  const lockOf = (owner: LockOwner): string => JSON.stringify({ ...owner, at: new Date().toISOString() });

  it("judges an owner by its whole identity: this pid in an earlier life, or another start time, is dead; another pid is looked up", async () => {
    const path = join(dir, "job.lock");
    const self = newLockOwner();
    try {
      // The same pid in an earlier life of it (a reused pid): dead, however the instance reads.
      await writeFile(path, lockOf({ ...self, startTime: `${self.startTime}-earlier` }));
      expect(await liveHolder(path, self)).toBeUndefined();
      expect(await acquireLock(path, self)).toBe(true);
      // Another process's start time under this process's instance id: still not this process.
      await writeFile(path, lockOf({ ...self, pid: 999_999_999, startTime: self.startTime }));
      expect(await liveHolder(path, self)).toBeUndefined();
      expect(await acquireLock(path, self)).toBe(true);
      // This very holder: alive.
      expect(await liveHolder(path, self)).toMatchObject({ instance: self.instance });
      expect(await acquireLock(path, newLockOwner())).toBe(false);
    } finally {
      retireLockOwner(self);
    }
  });

  it("treats a lock of this process as alive only while its holder is open", async () => {
    const path = join(dir, "job.lock");
    const self = newLockOwner();
    const sibling = newLockOwner();
    try {
      await writeFile(path, lockOf(sibling));
      expect(await liveHolder(path, self)).toMatchObject({ instance: sibling.instance });
      retireLockOwner(sibling);
      expect(await liveHolder(path, self)).toBeUndefined();
    } finally {
      retireLockOwner(self);
    }
  });

  it("releases only its own lock: another holder's, or one of this pid in another life, stays", async () => {
    const path = join(dir, "job.lock");
    const self = newLockOwner();
    const other = newLockOwner();
    try {
      for (const theirs of [other, { ...self, instance: other.instance }, { ...self, startTime: `${self.startTime}-earlier` }, { ...self, pid: 999_999_999 }]) {
        await writeFile(path, lockOf(theirs));
        await releaseLock(path, self);
        expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject(theirs);
      }
      expect(await acquireLock(join(dir, "mine.lock"), self)).toBe(true);
      await releaseLock(join(dir, "mine.lock"), self);
      await expect(readFile(join(dir, "mine.lock"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
      // Releasing a lock that is not there, or is torn, is no error and removes nothing else.
      await releaseLock(join(dir, "absent.lock"), self);
      await writeFile(join(dir, "torn.lock"), "");
      await releaseLock(join(dir, "torn.lock"), self);
      expect(await readFile(join(dir, "torn.lock"), "utf8")).toBe("");
    } finally {
      retireLockOwner(self);
      retireLockOwner(other);
    }
  });

  it("takes over a torn lock (empty or cut short) and leaves no temp or stale file beside it", async () => {
    const self = newLockOwner();
    try {
      for (const [name, text] of [
        ["empty.lock", ""],
        ["cut.lock", lockOf(self).slice(0, 20)],
        ["other.lock", '{"not":"a lock"}'],
      ] as const) {
        const path = join(dir, name);
        await writeFile(path, text);
        expect(await liveHolder(path, self)).toBeUndefined();
        expect(await acquireLock(path, self)).toBe(true);
        expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ pid: self.pid, startTime: self.startTime, instance: self.instance });
      }
      const left = await exec(["ls", "-A", dir], { cwd: dir, captureStdout: true });
      expect(
        (left.stdout?.toString() ?? "")
          .split("\n")
          .filter((line) => line !== "")
          .sort(),
      ).toEqual(["cut.lock", "empty.lock", "other.lock"]);
    } finally {
      retireLockOwner(self);
    }
  });
  it("answers no holder for a lock that is not there", async () => {
    const self = newLockOwner();
    try {
      expect(await liveHolder(join(dir, "absent.lock"), self)).toBeUndefined();
    } finally {
      retireLockOwner(self);
    }
  });

  it("fails on a lock it cannot read, instead of taking it as free", async () => {
    const self = newLockOwner();
    const path = join(dir, "folder.lock");
    await mkdir(path);
    try {
      await expect(liveHolder(path, self)).rejects.toMatchObject({ code: "EISDIR" });
      await expect(acquireLock(path, self)).rejects.toMatchObject({ code: "EISDIR" });
      expect(await readdir(path)).toEqual([]);
    } finally {
      retireLockOwner(self);
    }
  });

  it("reports the failed write itself when the lock cannot be written, and names a bad owner", async () => {
    const self = newLockOwner();
    try {
      // The folder is gone: the error is the write's, not the cleanup's after it.
      await expect(acquireLock(join(dir, "gone", "job.lock"), self)).rejects.toMatchObject({ code: "ENOENT", syscall: "open" });
      await expect(acquireLock(join(dir, "job.lock"), { ...self, pid: -1 })).rejects.toThrow(/queue lock/);
    } finally {
      retireLockOwner(self);
    }
  });
});
