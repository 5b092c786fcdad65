/**
 * A bounded tail of a byte stream: it keeps at most a fixed number of bytes in memory however
 * much passes through, and renders the last lines without splitting a UTF-8 character.
 */

/** Default bounds of a kept tail. */
export const DEFAULT_TAIL_LINES = 20;
export const DEFAULT_TAIL_BYTES = 64 * 1024;

/** The smallest ring a tail holds once something was pushed. */
const FIRST_RING_BYTES = 16 * 1024;

export class TailBuffer {
  // A ring of the last maxBytes bytes: pushing copies into it, so a command printing gigabytes
  // creates no garbage here. It grows with what it holds (doubling) until it is maxBytes: a log's
  // capped tail (32 MiB) of a step that prints a few kilobytes held 32 MiB of memory outside the
  // heap, and the App's garbage collector ran full collections beside every agent for it.
  private ring: Buffer | undefined;
  private position = 0;
  private filled = 0;
  private total = 0;
  private readonly maxBytes: number;

  /** A bound below 0 keeps nothing, as 0 does. */
  constructor(maxBytes: number = DEFAULT_TAIL_BYTES) {
    this.maxBytes = Math.max(0, maxBytes);
  }

  /** Bytes seen in all. */
  get bytesSeen(): number {
    return this.total;
  }

  /** Bytes of memory the ring holds now: what it keeps, rounded up, never more than its bound. */
  get capacity(): number {
    return this.ring?.length ?? 0;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (chunk.length === 0 || this.maxBytes === 0) return;
    // Until it first fills, the ring holds its bytes from its start (position = filled), so it can grow by a copy.
    // Stryker disable next-line ConditionalExpression,EqualityOperator: once full, reserve would copy the ring into a new one of its size on every push: the same bytes, only garbage.
    const ring = this.filled < this.maxBytes ? this.reserve(this.filled + chunk.length) : (this.ring as Buffer);
    // Stryker disable next-line EqualityOperator: a chunk of exactly the ring's size lands the same either way.
    if (chunk.length >= this.maxBytes) {
      chunk.copy(ring, 0, chunk.length - this.maxBytes);
      this.position = 0;
      this.filled = this.maxBytes;
      return;
    }
    const first = Math.min(chunk.length, this.maxBytes - this.position);
    chunk.copy(ring, this.position, 0, first);
    chunk.copy(ring, 0, first); // what did not fit before the end of the ring, if anything
    this.position = (this.position + chunk.length) % this.maxBytes;
    this.filled = Math.min(this.maxBytes, this.filled + chunk.length);
  }

  /** The ring, grown (to twice its size at least, at most maxBytes) if it cannot hold `bytes`. */
  private reserve(bytes: number): Buffer {
    const held = this.ring?.length ?? 0;
    if (this.ring && bytes <= held) return this.ring;
    const ring = Buffer.allocUnsafe(Math.min(this.maxBytes, Math.max(bytes, held * 2, FIRST_RING_BYTES)));
    this.ring?.copy(ring, 0, 0, this.filled);
    this.ring = ring;
    return ring;
  }

  /** The kept bytes in order (a copy once the ring has wrapped). */
  bytes(): Buffer {
    return this.contents();
  }

  /** The kept bytes in order. */
  private contents(): Buffer {
    if (!this.ring) return Buffer.alloc(0);
    if (this.filled < this.maxBytes) return this.ring.subarray(0, this.filled);
    return Buffer.concat([this.ring.subarray(this.position), this.ring.subarray(0, this.position)], this.maxBytes);
  }

  /** The last `maxLines` lines, within `maxBytes` bytes, as valid UTF-8 text. */
  text(maxLines: number = DEFAULT_TAIL_LINES): string {
    return tailText(this.contents(), maxLines, this.maxBytes);
  }
}

/**
 * The last `maxLines` lines of `bytes`, at most `maxBytes` bytes of UTF-8, never starting
 * inside a multibyte character. A trailing newline does not count as an empty last line.
 */
export function tailText(bytes: Buffer, maxLines: number, maxBytes: number): string {
  // A byte bound of 0 or less leaves an empty view below; a line bound of 0 must stop here.
  if (maxLines <= 0) return "";
  // Stryker disable next-line EqualityOperator: a view of all the bytes is the same view either way.
  let view = bytes.length > maxBytes ? bytes.subarray(bytes.length - maxBytes) : bytes;
  view = view.subarray(utf8Start(view), utf8End(view));
  let end = view.length;
  if (view[end - 1] === 0x0a) end -= 1;
  let start = end;
  let lines = 0;
  while (start > 0) {
    if (view[start - 1] === 0x0a) {
      lines += 1;
      if (lines >= maxLines) break;
    }
    start -= 1;
  }
  return view.subarray(start, end).toString("utf8");
}

/** Index of the first byte in `bytes` that does not continue a multibyte character. */
function utf8Start(bytes: Buffer): number {
  let i = 0;
  // A UTF-8 character is at most 4 bytes, so at most 3 continuation bytes can lead (past the end, `?? 0` stops).
  while (i < 3 && ((bytes[i] ?? 0) & 0xc0) === 0x80) i += 1;
  return i;
}

/**
 * Length of `bytes` without a last character that was cut off (output ended mid-character,
 * for example because the process was killed while writing it).
 */
function utf8End(bytes: Buffer): number {
  // Walk back over the continuation bytes to the lead byte of the last character. More than 3
  // of them are no character's, and a lead byte further back than 3 needs no more bytes than it
  // has, so the length stands; before the first byte, `?? 0` stops the walk and counts as ASCII.
  let lead = bytes.length - 1;
  while (((bytes[lead] ?? 0) & 0xc0) === 0x80) lead -= 1;
  const byte = bytes[lead] ?? 0;
  const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
  return bytes.length - lead < needed ? lead : bytes.length;
}

/** Truncates a string to at most `maxBytes` bytes of UTF-8 keeping its end, on a character boundary. */
export function keepLastBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  // Stryker disable next-line EqualityOperator: a text of exactly maxBytes is kept whole either way.
  if (bytes.length <= maxBytes) return text;
  const view = bytes.subarray(bytes.length - maxBytes);
  return view.subarray(utf8Start(view)).toString("utf8");
}
