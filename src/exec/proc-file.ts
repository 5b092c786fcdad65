/**
 * Reading a small file of /proc (a process's `stat`, a thread's `children`) the way a scan of
 * many processes can afford. /proc gives its files a size of 0, so `readFileSync` reads each
 * into a fresh 64 KiB buffer: a scan of the host's processes, or an agent's tree read ten times
 * a second, then spends more on allocation and garbage collection than on the reads (twice
 * the CPU per read on Node 20). One buffer is kept and reused; a longer file is read on past it.
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";

/** Longer than any `stat` line and a thread's `children` of a few thousand pids. */
const BUFFER_BYTES = 16 * 1024;
let buffer: Buffer | undefined;

/** The file's text (latin1, as /proc writes bytes), or undefined when it cannot be read (the process is gone, no /proc). */
export function readProcFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    buffer ??= Buffer.allocUnsafe(BUFFER_BYTES);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) return buffer.toString("latin1", 0, length);
      length += read;
      // Full: what is left is read from where this stopped.
      if (length === buffer.length) return buffer.toString("latin1") + readFileSync(fd, "latin1");
    }
  } catch {
    // The process ended between the open and the read.
    return undefined;
  } finally {
    closeSync(fd);
  }
}
