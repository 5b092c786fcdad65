import { existsSync, fstatSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readBoundedFile, readBoundedFileSync, readBoundedText, readBoundedTextSync, UnsafeFileError } from "../../src/files/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/** What both readers throw for `path` (the async one first). */
async function thrown(path: string, options: Parameters<typeof readBoundedFile>[1]): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (const read of [() => readBoundedFile(path, options), async () => readBoundedFileSync(path, options)]) {
    errors.push(
      await read().then(
        () => new Error(`${path} was read`),
        (caught: unknown) => caught,
      ),
    );
  }
  return errors;
}

/** The paths this process holds a descriptor on, as the kernel names them. */
function openPaths(): string[] {
  const paths: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      paths.push(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // The descriptor readdir itself used is gone by now.
    }
  }
  return paths;
}

describe("bounded reader, what the file system can still surprise it with", () => {
  it("stops at the end of a file shorter than its fstat size, and returns only the bytes read", async () => {
    // A sysfs attribute says 4096 bytes and holds a few: the same as a file cut between the
    // fstat and the read. The list of online CPUs is there on every Linux.
    const path = "/sys/devices/system/cpu/online";
    if (!existsSync(path)) throw new Error(`${path} is missing: mount sysfs (mount -t sysfs sysfs /sys) to run this test`);
    const fd = openSync(path, "r");
    const claimed = fstatSync(fd).size;
    closeSync(fd);
    const real = readFileSync(path);
    expect(real.length).toBeGreaterThan(0);
    expect(real.length).toBeLessThan(claimed);
    expect((await readBoundedFile(path, { maxBytes: 8192 })).equals(real)).toBe(true);
    expect(readBoundedFileSync(path, { maxBytes: 8192 }).equals(real)).toBe(true);
    // Tailing it starts at the size fstat claims, past the real end: nothing is there.
    expect(await readBoundedFile(path, { maxBytes: 16, tail: true })).toHaveLength(0);
  });

  it("lets an error that is no refusal go through as the system's own (a name too long)", async () => {
    const path = join(makeTempDir(), "n".repeat(300));
    for (const error of await thrown(path, { maxBytes: 100 })) {
      expect(error).not.toBeInstanceOf(UnsafeFileError);
      expect((error as NodeJS.ErrnoException).code).toBe("ENAMETOOLONG");
    }
  });

  it("reads an empty file as no bytes", async () => {
    const dir = makeTempDir();
    const path = join(dir, "empty");
    writeFileSync(path, "");
    expect(await readBoundedFile(path, { maxBytes: 10, within: dir })).toHaveLength(0);
    expect(readBoundedFileSync(path, { maxBytes: 0 })).toHaveLength(0);
  });

  it("closes the file after a read and after each refusal, async and sync", async () => {
    const dir = makeTempDir();
    const inner = join(dir, "inner");
    mkdirSync(inner);
    const file = join(dir, "file.txt");
    writeFileSync(file, "0123456789");
    const held = () => openPaths().filter((path) => path === file || path === dir);
    expect(held()).toEqual([]);
    expect(readBoundedTextSync(file, { maxBytes: 100 })).toBe("0123456789");
    expect(held()).toEqual([]);
    expect(await readBoundedText(file, { maxBytes: 100 })).toBe("0123456789");
    expect(held()).toEqual([]);
    // Too large, outside `within`, and not a regular file (the folder itself): each was opened first.
    for (const [path, options] of [
      [file, { maxBytes: 4 }],
      [file, { maxBytes: 100, within: inner }],
      [dir, { maxBytes: 100 }],
    ] as const) {
      for (const error of await thrown(path, options)) expect(error).toBeInstanceOf(UnsafeFileError);
      expect(held()).toEqual([]);
    }
  });

  it("checks `within` by where the descriptor is, the same in the sync reader (the file itself as the folder)", async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, "x.txt"), "x");
    // The parent folder lies outside `within` here; only the opened file's own path is inside.
    expect(readBoundedTextSync(join(dir, "x.txt"), { maxBytes: 10, within: join(dir, "x.txt") })).toBe("x");
    expect(await readBoundedText(join(dir, "x.txt"), { maxBytes: 10, within: join(dir, "x.txt") })).toBe("x");
  });

  it("reads a file whose name starts with two dots, which is inside its folder", async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, "..notes"), "n");
    expect(await readBoundedText(join(dir, "..notes"), { maxBytes: 10, within: dir })).toBe("n");
    expect(readBoundedTextSync(join(dir, "..notes"), { maxBytes: 10, within: dir })).toBe("n");
  });

  it("reads a file up to the cap whole, even when head or tail is asked", async () => {
    const path = join(makeTempDir(), "small.txt");
    writeFileSync(path, "abcdef");
    for (const options of [
      { maxBytes: 6, head: true },
      { maxBytes: 6, tail: true },
      { maxBytes: 100, tail: true },
    ]) {
      expect(await readBoundedText(path, options)).toBe("abcdef");
      expect(readBoundedTextSync(path, options)).toBe("abcdef");
    }
    expect(readBoundedTextSync(path, { maxBytes: 5, head: true })).toBe("abcde");
    expect(await readBoundedText(path, { maxBytes: 5, tail: true })).toBe("bcdef");
  });
});
