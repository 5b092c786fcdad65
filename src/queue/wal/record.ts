/**
 * One record of the write-ahead log: a line `<crc32 of the JSON, 8 hex digits> <JSON>\n`. A
 * line cut short (a torn tail: no newline) is not read yet; a line whose checksum does not
 * match (a torn write, a sector of zeros) is skipped, never mis-read as a job.
 */
import { crc32 } from "node:zlib";

/** An enqueued job (its whole record), or a tombstone: the job is done or quarantined. */
export type WalEntry = { t: "job"; id: string; r: unknown } | { t: "done"; id: string };

/** The line that stores `entry`. */
export function encodeEntry(entry: WalEntry): string {
  const json = JSON.stringify(entry);
  return `${checksum(json)} ${json}\n`;
}

/** The line of a job's record, from its JSON text (not parsed again on the webhook's path). */
export function encodeJobLine(id: string, json: string): string {
  const entry = `{"t":"job","id":${JSON.stringify(id)},"r":${json}}`;
  return `${checksum(entry)} ${entry}\n`;
}

function checksum(json: string): string {
  return crc32(json).toString(16).padStart(8, "0");
}

/** What a chunk of a log holds: its whole records, how many bytes they end at, and how many lines were damaged. */
export interface DecodedChunk {
  entries: WalEntry[];
  /** Bytes of the chunk up to and including its last newline: the next read starts there. */
  consumed: number;
  /** Lines skipped: a bad checksum, not JSON, not an entry. */
  damaged: number;
}

/** Reads every complete line of `chunk`; the bytes after its last newline are left for later (or are a torn tail). */
export function decodeChunk(chunk: Buffer): DecodedChunk {
  const entries: WalEntry[] = [];
  let damaged = 0;
  let start = 0;
  for (let end = chunk.indexOf(10, start); end !== -1; end = chunk.indexOf(10, start)) {
    const entry = decodeLine(chunk.toString("utf8", start, end));
    if (entry) entries.push(entry);
    else damaged += 1;
    start = end + 1;
  }
  return { entries, consumed: start, damaged };
}

/** One line (without its newline) as an entry, or undefined when it is damaged. */
export function decodeLine(line: string): WalEntry | undefined {
  const json = line.slice(9);
  if (line[8] !== " " || line.slice(0, 8) !== checksum(json)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  return isEntry(value) ? value : undefined;
}

function isEntry(value: unknown): value is WalEntry {
  // A primitive or null, as an object, has none of these properties.
  const entry = Object(value) as { t?: unknown; id?: unknown; r?: unknown };
  if (typeof entry.id !== "string" || !/^[A-Za-z0-9-]+$/.test(entry.id)) return false;
  return entry.t === "done" || (entry.t === "job" && "r" in entry);
}
