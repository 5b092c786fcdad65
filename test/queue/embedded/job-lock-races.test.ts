/**
 * The paths of acquireLock and releaseLock that only a race with another process reaches, made
 * deterministic: a FIFO stands where the holder reads a lock, so its read blocks until the test
 * (the "other process") has changed the folder, and a symbolic link at the lock's name lets the
 * test make the file vanish after its name was moved (the link moves; what it points to goes).
 * No timing: every step waits for the holder to open the FIFO (once per read), or polls for its move.
 */
import { lstat, mkdir, open, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { exec } from "../../../src/exec/index.js";
import { acquireLock, newLockOwner, releaseLock, retireLockOwner, type LockOwner } from "../../../src/queue/job-lock.js";
import { folderEvents, writtenNames } from "../../support/fs-events.js";
import { tempDir } from "../helpers.js";
import { until } from "../../support/poll.js";

describe("job locks under races, staged", () => {
  let dir: string;
  let remove: () => Promise<void>;
  let self: LockOwner;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-lock-race-"));
    self = newLockOwner();
  });
  afterEach(async () => {
    retireLockOwner(self);
    await remove();
  });

  const lockText = (owner: LockOwner): string => JSON.stringify({ ...owner, at: new Date().toISOString() });
  /** A lock of this pid in an earlier life: its holder is dead. */
  const deadText = (): string => lockText({ ...self, startTime: `${self.startTime}-an-earlier-life` });
  const aside = (path: string): string => `${path}.stale.${self.pid}.${self.instance}`;
  async function fifo(path: string): Promise<void> {
    expect((await exec(["mkfifo", path], { cwd: dir })).exitCode).toBe(0);
  }
  /** Waits for the holder to open the FIFO for reading (opening it to write waits for a reader), then runs `meanwhile` and feeds it `text`. */
  async function feed(path: string, text: string, meanwhile: () => Promise<void> = async () => undefined): Promise<void> {
    const writer = await open(path, "w");
    try {
      await meanwhile();
      await writer.writeFile(text);
    } finally {
      await writer.close();
    }
  }
  /** Waits until the holder moved the lock aside: its first read is over, and its next read is of the moved file. */
  const moved = (path: string): Promise<void> =>
    until("the lock moved aside", () =>
      lstat(aside(path)).then(
        () => true,
        () => false,
      ),
    );
  const mine = async (path: string): Promise<boolean> => JSON.parse(await readFile(path, "utf8")).instance === self.instance;

  it("gives up after three rounds on a lock that vanishes each time it is read (a dangling link at its name), one temp file a round", async () => {
    const path = join(dir, "job.lock");
    await symlink(join(dir, "nowhere"), path);
    let taken: boolean | undefined;
    const events = await folderEvents(dir, async () => {
      taken = await acquireLock(path, self);
    });
    expect(taken).toBe(false);
    expect(writtenNames(events)).toHaveLength(3);
    expect(writtenNames(events).every((name) => name.startsWith("job.lock.") && name.endsWith(".tmp"))).toBe(true);
    expect(await readdir(dir)).toEqual(["job.lock"]);
    expect((await lstat(path)).isSymbolicLink()).toBe(true);
  });

  it("takes the lock when the dead holder's file is gone before its move (another recoverer moved it first)", async () => {
    const path = join(dir, "job.lock");
    await fifo(path);
    const taking = acquireLock(path, self);
    await feed(path, deadText(), () => rm(path));
    expect(await taking).toBe(true);
    expect(await mine(path)).toBe(true);
    expect(await readdir(dir)).toEqual(["job.lock"]);
  });

  it("fails when the move aside fails otherwise than the file being gone, instead of trying again", async () => {
    const path = join(dir, "job.lock");
    await writeFile(path, deadText());
    await mkdir(aside(path));
    await writeFile(join(aside(path), "keep"), "");
    await expect(acquireLock(path, self)).rejects.toMatchObject({ syscall: "rename" });
    expect(await readFile(path, "utf8")).toContain("an-earlier-life");
  });

  it("goes on when the file it moved aside is gone before it reads it back", async () => {
    const path = join(dir, "job.lock");
    const target = join(dir, "target");
    await fifo(target);
    await symlink(target, path);
    const taking = acquireLock(path, self);
    // Read through the link; the link is then moved aside, and what it points to is gone.
    await feed(target, deadText(), () => rm(target));
    expect(await taking).toBe(true);
    expect(await mine(path)).toBe(true);
    expect(await readdir(dir)).toEqual(["job.lock"]);
  });

  it("removes the moved-aside file with force: another recoverer may have removed it first (same lock read back)", async () => {
    const path = join(dir, "job.lock");
    const target = join(dir, "target");
    await fifo(target);
    await symlink(target, path);
    const dead = deadText();
    const taking = acquireLock(path, self);
    await feed(target, dead);
    await moved(path);
    // Its second read is of the moved-aside link: the other recoverer removes that meanwhile.
    await feed(target, dead, () => rm(aside(path)));
    expect(await taking).toBe(true);
    expect(await mine(path)).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(["job.lock", "target"]);
  });

  it("gives back nothing and fails nothing when the moved-aside file, changed by another holder, is gone (two torn locks)", async () => {
    const path = join(dir, "job.lock");
    const target = join(dir, "target");
    await fifo(target);
    await symlink(target, path);
    const taking = acquireLock(path, self);
    await feed(target, "");
    await moved(path);
    await feed(target, '{"torn', () => rm(aside(path)));
    expect(await taking).toBe(false);
    expect(await readdir(dir)).toEqual(["target"]);
  });

  it("releases its lock with force: it may be removed between the read and the removal", async () => {
    const path = join(dir, "job.lock");
    await fifo(path);
    const releasing = releaseLock(path, self);
    await feed(path, lockText(self), () => rm(path));
    await expect(releasing).resolves.toBeUndefined();
    expect(await readdir(dir)).toEqual([]);
  });
});
