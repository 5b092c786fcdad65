/**
 * Small /proc files read through one reused buffer: the text is the file's whole, a file longer
 * than the buffer included, and a file that cannot be read answers undefined.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readProcFile } from "../../src/exec/proc-file.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

it("reads a process's stat line as /proc writes it", () => {
  const line = readProcFile(`/proc/${process.pid}/stat`);
  expect(line).toMatch(new RegExp(`^${process.pid} \\(.*\\) [A-Z] `));
  expect(line?.endsWith("\n")).toBe(true);
});

it("reads a file longer than its buffer whole, byte for byte, and a short one read after it alone", () => {
  const dir = makeTempDir();
  const long = join(dir, "long");
  // Every byte value, so a latin1 round trip that lost or doubled one would show.
  const bytes = Buffer.from(Array.from({ length: 40_000 }, (_, index) => (index * 7) % 256));
  writeFileSync(long, bytes);
  expect(readProcFile(long)).toBe(readFileSync(long, "latin1"));
  const short = join(dir, "short");
  writeFileSync(short, "12 34\n");
  expect(readProcFile(short)).toBe("12 34\n");
  writeFileSync(short, "");
  expect(readProcFile(short)).toBe("");
});

it("answers undefined for a process that is gone and for a folder", () => {
  expect(readProcFile("/proc/0/stat")).toBeUndefined();
  expect(readProcFile(makeTempDir())).toBeUndefined();
});

it("leaves no file open, whether it read the file or the read failed", () => {
  const open = (): number => readdirSync("/proc/self/fd").length;
  const before = open();
  for (let read = 0; read < 50; read += 1) {
    readProcFile(`/proc/${process.pid}/stat`);
    readProcFile(makeTempDir());
  }
  expect(open()).toBe(before);
});
