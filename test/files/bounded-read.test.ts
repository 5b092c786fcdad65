import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { readBoundedFile, readBoundedFileSync, readBoundedText, readBoundedTextSync, UnsafeFileError, type UnsafeFileReason } from "../../src/files/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/** The reason the async and the sync reader both give for refusing `path`. */
async function refusal(path: string, options: Parameters<typeof readBoundedFile>[1]): Promise<UnsafeFileReason[]> {
  const reasons: UnsafeFileReason[] = [];
  for (const read of [() => readBoundedFile(path, options), async () => readBoundedFileSync(path, options)]) {
    const error = await read().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(UnsafeFileError);
    expect((error as UnsafeFileError).path).toBe(path);
    expect((error as Error).message).toContain(path);
    reasons.push((error as UnsafeFileError).reason);
  }
  return reasons;
}

async function mkfifo(path: string): Promise<void> {
  const made = await exec(["mkfifo", path], { cwd: "/" });
  // mkfifo is in coreutils; a machine without it cannot run this test.
  expect(made.exitCode).toBe(0);
}

describe("bounded reader", () => {
  it("reads a regular file within the cap, async and sync", async () => {
    const dir = makeTempDir("harness-bounded-");
    writeFileSync(join(dir, "a.json"), '{"ok":true}\n');
    expect(await readBoundedText(join(dir, "a.json"), { maxBytes: 64, within: dir })).toBe('{"ok":true}\n');
    expect(readBoundedTextSync(join(dir, "a.json"), { maxBytes: 64, within: dir })).toBe('{"ok":true}\n');
    // Exactly the cap is allowed.
    expect(readBoundedFileSync(join(dir, "a.json"), { maxBytes: 12 })).toHaveLength(12);
  });

  it("refuses a FIFO without waiting for a writer (nothing ever opens it for writing)", async () => {
    const dir = makeTempDir("harness-bounded-");
    const fifo = join(dir, "pipe");
    await mkfifo(fifo);
    expect(await refusal(fifo, { maxBytes: 1024 })).toEqual(["not-regular", "not-regular"]);
  });

  it("refuses a folder as not a regular file, and a missing file as missing", async () => {
    const dir = makeTempDir("harness-bounded-");
    mkdirSync(join(dir, "sub"));
    expect(await refusal(join(dir, "sub"), { maxBytes: 1024 })).toEqual(["not-regular", "not-regular"]);
    expect(await refusal(join(dir, "nothing"), { maxBytes: 1024 })).toEqual(["missing", "missing"]);
  });

  it("refuses a 1.5 GiB sparse file by its size, without reading it", async () => {
    const dir = makeTempDir("harness-bounded-");
    const big = join(dir, "verdict.json");
    writeFileSync(big, "");
    truncateSync(big, 1.5 * 1024 ** 3);
    const before = process.memoryUsage().arrayBuffers;
    expect(await refusal(big, { maxBytes: 1024 * 1024 })).toEqual(["too-large", "too-large"]);
    // Nothing near the file's size was allocated (a read of it would have taken 1.5 GiB).
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
    const error = (await readBoundedFile(big, { maxBytes: 1024 * 1024 }).catch((caught: unknown) => caught)) as UnsafeFileError;
    expect(error.limit).toBe(1024 * 1024);
    expect(error.message).toMatch(/larger than 1048576 bytes/);
  });

  it("reads only the tail of a large log when asked to", async () => {
    const dir = makeTempDir("harness-bounded-");
    const log = join(dir, "agent.log");
    writeFileSync(log, `${"x".repeat(100_000)}THE END`);
    expect(await readBoundedText(log, { maxBytes: 7, tail: true })).toBe("THE END");
    expect(readBoundedTextSync(log, { maxBytes: 7, tail: true })).toBe("THE END");
  });

  it("refuses a symlink to a secret outside its folder, and a path through a symlinked parent", async () => {
    const root = makeTempDir("harness-bounded-");
    const artifacts = join(root, "artifacts");
    mkdirSync(artifacts);
    writeFileSync(join(root, "secret.pem"), "-----BEGIN PRIVATE KEY-----\n");
    symlinkSync(join(root, "secret.pem"), join(artifacts, "verdict.json"));
    expect(await refusal(join(artifacts, "verdict.json"), { maxBytes: 1024, within: artifacts })).toEqual(["symlink", "symlink"]);
    // A symlink inside the folder is refused too: the reader follows none.
    writeFileSync(join(artifacts, "real.json"), "{}");
    symlinkSync("real.json", join(artifacts, "alias.json"));
    expect(await refusal(join(artifacts, "alias.json"), { maxBytes: 1024, within: artifacts })).toEqual(["symlink", "symlink"]);
    // O_NOFOLLOW guards the last name only; `within` guards the parents.
    symlinkSync(root, join(artifacts, "up"));
    expect(await refusal(join(artifacts, "up", "secret.pem"), { maxBytes: 1024, within: artifacts })).toEqual(["outside-folder", "outside-folder"]);
  });
});

describe("bounded reader, what it says and reads at the edges", () => {
  /** The refusal both readers give for `path`, the error itself (they agree on the reason, checked above). */
  async function refused(path: string, options: Parameters<typeof readBoundedFile>[1]): Promise<UnsafeFileError[]> {
    const errors: UnsafeFileError[] = [];
    for (const read of [() => readBoundedFile(path, options), async () => readBoundedFileSync(path, options)]) {
      const error: unknown = await read().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      if (!(error instanceof UnsafeFileError)) throw new Error(`${path} was not refused: ${String(error)}`);
      errors.push(error);
    }
    return errors;
  }

  it("names each refusal in words without the path, with the cap only for a file too large", async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, "file.txt"), "x".repeat(10));
    symlinkSync(join(dir, "file.txt"), join(dir, "link"));
    const shown = async (path: string, maxBytes = 100) =>
      (await refused(path, { maxBytes })).map((error) => [error.name, error.reason, error.detail, error.limit]);
    // A path through a file as if it were a folder is missing too (ENOTDIR), not an error of the App.
    expect(await shown(join(dir, "file.txt", "below"))).toEqual(Array(2).fill(["UnsafeFileError", "missing", "does not exist", undefined]));
    expect(await shown(join(dir, "link"))).toEqual(Array(2).fill(["UnsafeFileError", "symlink", "is a symlink, which is not followed", undefined]));
    expect(await shown(dir)).toEqual(Array(2).fill(["UnsafeFileError", "not-regular", "is not a regular file", undefined]));
    expect(await shown(join(dir, "file.txt"), 4)).toEqual(Array(2).fill(["UnsafeFileError", "too-large", "is larger than 4 bytes (10)", 4]));
  });

  it("refuses a socket as not a regular file", async () => {
    const path = join(makeTempDir(), "app.sock");
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(path, resolve));
    try {
      expect((await refused(path, { maxBytes: 100 })).map((error) => [error.reason, error.detail])).toEqual(
        Array(2).fill(["not-regular", "is not a regular file"]),
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("reads the head or the tail of a file larger than its reads, byte for byte, async and sync", async () => {
    const path = join(makeTempDir(), "big.log");
    // Several 64 KiB reads, each at its own offset: every byte says where it is.
    const content = Buffer.from(Array.from({ length: 200_000 }, (_, index) => index % 251));
    writeFileSync(path, content);
    const maxBytes = 150_001;
    expect((await readBoundedFile(path, { maxBytes, head: true })).equals(content.subarray(0, maxBytes))).toBe(true);
    expect(readBoundedFileSync(path, { maxBytes, head: true }).equals(content.subarray(0, maxBytes))).toBe(true);
    expect((await readBoundedFile(path, { maxBytes, tail: true })).equals(content.subarray(content.length - maxBytes))).toBe(true);
    expect(readBoundedFileSync(path, { maxBytes, tail: true }).equals(content.subarray(content.length - maxBytes))).toBe(true);
    expect(readBoundedFileSync(path, { maxBytes: 300_000 }).equals(content)).toBe(true);
  });

  it("refuses the folder above `within` itself, and reads a file that is `within`", async () => {
    const dir = makeTempDir();
    const inner = join(dir, "inner");
    mkdirSync(inner);
    writeFileSync(join(inner, "x.txt"), "x");
    expect((await refused(dir, { maxBytes: 100, within: inner })).map((error) => [error.reason, error.detail])).toEqual(
      Array(2).fill(["outside-folder", "lies outside its folder through a symlinked parent"]),
    );
    expect(await readBoundedText(join(inner, "x.txt"), { maxBytes: 100, within: join(inner, "x.txt") })).toBe("x");
    expect(readBoundedTextSync(join(inner, "x.txt"), { maxBytes: 100, within: inner })).toBe("x");
  });
});
