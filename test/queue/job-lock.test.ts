import { open, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { acquireLock, newLockOwner, retireLockOwner } from "../../src/queue/job-lock.js";
import { tempDir } from "./helpers.js";

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
});
