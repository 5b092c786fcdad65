/**
 * The one way the App reads a file that a repository or an agent controls (a receipt in a
 * worktree, an artifact an agent wrote, a `.pth` in a linked virtualenv, a log a sandboxed step
 * fills). Such a file may be a FIFO (an open for reading waits for a writer forever), a device,
 * a sparse file of gigabytes, or a symlink to one of the App's secrets. So the open never
 * blocks and never follows a final symlink (`O_NOFOLLOW | O_NONBLOCK`), the opened descriptor
 * must be a regular file no larger than the caller's cap (checked with `fstat`, before any
 * byte is read), and at most the cap is read. A refusal is an {@link UnsafeFileError} that
 * names the file and why; each caller maps it onto the failure it already has for a bad file.
 */
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, realpathSync } from "node:fs";
import { open, readlink, realpath, type FileHandle } from "node:fs/promises";
import { dirname, relative, sep, isAbsolute } from "node:path";

/** Why a file was refused. `missing` is its own reason so callers can keep "absent" apart from "hostile". */
export type UnsafeFileReason = "missing" | "symlink" | "not-regular" | "too-large" | "outside-folder";

/** A file the bounded reader would not read; `reason` says why, `path` which file. */
export class UnsafeFileError extends Error {
  readonly reason: UnsafeFileReason;
  readonly path: string;
  /** Why, in words without the path ("is a symlink, which is not followed"), for messages that must not show the App's paths. */
  readonly detail: string;
  /** The cap, for `too-large`. */
  readonly limit?: number;

  constructor(path: string, reason: UnsafeFileReason, detail: string, limit?: number) {
    super(`${path} ${detail}`);
    this.name = "UnsafeFileError";
    this.path = path;
    this.reason = reason;
    this.detail = detail;
    // Stryker disable next-line ConditionalExpression: the declared field makes `limit` an own property anyway (undefined), so assigning an absent cap changes nothing.
    if (limit !== undefined) this.limit = limit;
  }
}

export interface BoundedReadOptions {
  /** The most bytes the caller accepts. A larger file is refused unless `tail` is set. */
  maxBytes: number;
  /** Read only the last `maxBytes` of a larger file instead of refusing it (a log being tailed). */
  tail?: boolean;
  /** Read only the first `maxBytes` of a larger file instead of refusing it (a script's `#!` line). */
  head?: boolean;
  /**
   * The folder the file must really lie in (after every symlink of its parents is resolved),
   * e.g. the artifact folder: a symlinked parent cannot lead the read out of it.
   */
  within?: string;
}

// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer (fstat then refuses
// it); on a regular file the flag changes nothing. O_NOFOLLOW: a final symlink fails with ELOOP.
// (libuv adds O_CLOEXEC itself.)
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Size of the reads a tail or a whole file is read in. */
const CHUNK = 64 * 1024;

/** Turns an open's error into a refusal where it is one; other errors (EACCES, EIO) go through. */
function refusalOfOpen(path: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return new UnsafeFileError(path, "missing", "does not exist");
  if (code === "ELOOP") return new UnsafeFileError(path, "symlink", "is a symlink, which is not followed");
  // A socket cannot be opened at all: Linux says ENXIO (as a FIFO opened for writing elsewhere
  // does), the BSDs and macOS EOPNOTSUPP.
  if (code === "ENXIO") return new UnsafeFileError(path, "not-regular", "is not a regular file");
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: Linux never answers an open with EOPNOTSUPP (the sandbox needs Linux); the BSDs' answer for a socket.
  if (code === "EOPNOTSUPP") return new UnsafeFileError(path, "not-regular", "is not a regular file");
  return error;
}

/** What an `fstat` says of the opened file, or the refusal. Returns the number of bytes to read and where from. */
function plan(path: string, stat: { isFile(): boolean; size: number }, options: BoundedReadOptions): { start: number; length: number } {
  if (!stat.isFile()) throw new UnsafeFileError(path, "not-regular", "is not a regular file");
  if (stat.size <= options.maxBytes) return { start: 0, length: stat.size };
  if (options.tail === true) return { start: stat.size - options.maxBytes, length: options.maxBytes };
  if (options.head === true) return { start: 0, length: options.maxBytes };
  throw new UnsafeFileError(path, "too-large", `is larger than ${options.maxBytes} bytes (${stat.size})`, options.maxBytes);
}

/** True when `path` is `root` or lies under it; both absolute and resolved. */
function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  // Stryker disable next-line ConditionalExpression,StringLiteral: an empty `rel` passes the second test too; the first names the case of the folder itself.
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** Where the kernel says descriptor `fd` really is (Linux), or undefined where `/proc` cannot tell. */
function openedAt(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } /* Stryker disable next-line BlockStatement: reached only without /proc (not Linux, which the sandbox needs); an empty catch answers undefined too. */ catch {
    return undefined;
  }
}

async function openedAtAsync(fd: number): Promise<string | undefined> {
  return readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
}

/**
 * Refuses a file that does not lie in `within`. `where` is the descriptor's own path, which closes
 * the race of a parent swapped for a symlink between a check and the open; without /proc the
 * callers pass the parent's resolved path (checked now), the next best.
 */
function refuseOutside(path: string, within: string, where: string): void {
  if (!inside(within, where)) throw new UnsafeFileError(path, "outside-folder", "lies outside its folder through a symlinked parent");
}

/**
 * Reads a file the repository or an agent controls, synchronously, without ever blocking on it:
 * for the few callers that must stay synchronous (the receipt check on a task's admission).
 */
export function readBoundedFileSync(path: string, options: BoundedReadOptions): Buffer {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (error) {
    throw refusalOfOpen(path, error);
  }
  try {
    if (options.within !== undefined) {
      const within = realpathSync(options.within);
      refuseOutside(path, within, openedAt(fd) ?? realpathSync(dirname(path)));
    }
    const { start, length } = plan(path, fstatSync(fd), options);
    const buffer = Buffer.alloc(length);
    let filled = 0;
    // Stryker disable next-line EqualityOperator: once the buffer is full one more read asks for no bytes, returns none and breaks out.
    while (filled < length) {
      const read = readSync(fd, buffer, filled, Math.min(CHUNK, length - filled), start + filled);
      if (read === 0) break;
      filled += read;
    }
    return buffer.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a file the repository or an agent controls, on the thread pool, never blocking on it
 * and never reading more than `options.maxBytes`. Throws {@link UnsafeFileError} for a file
 * that is missing, a symlink, not a regular file, larger than the cap, or outside `within`.
 */
export async function readBoundedFile(path: string, options: BoundedReadOptions): Promise<Buffer> {
  let handle: FileHandle;
  try {
    handle = await open(path, FLAGS);
  } catch (error) {
    throw refusalOfOpen(path, error);
  }
  try {
    if (options.within !== undefined) {
      const within = await realpath(options.within);
      refuseOutside(path, within, (await openedAtAsync(handle.fd)) ?? (await realpath(dirname(path))));
    }
    const { start, length } = plan(path, await handle.stat(), options);
    const buffer = Buffer.alloc(length);
    let filled = 0;
    // Stryker disable next-line EqualityOperator: once the buffer is full one more read asks for no bytes, returns none and breaks out.
    while (filled < length) {
      const { bytesRead } = await handle.read(buffer, filled, Math.min(CHUNK, length - filled), start + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/** {@link readBoundedFile} as UTF-8 text. */
export async function readBoundedText(path: string, options: BoundedReadOptions): Promise<string> {
  return (await readBoundedFile(path, options)).toString("utf8");
}

/** {@link readBoundedFileSync} as UTF-8 text. */
export function readBoundedTextSync(path: string, options: BoundedReadOptions): string {
  return readBoundedFileSync(path, options).toString("utf8");
}
