/** A suite's log read back for its test counts, bounded: the last 16 MiB of it, never through a symlink or a FIFO. */
import { readBoundedText, UnsafeFileError } from "../files/index.js";
import { readRunCounts, type RunCounts } from "./counts.js";

/** The most of a log read: summaries are at its end; `go test -v` counts every line, so a longer log under-counts alike on both sides. */
export const MAX_LOG_BYTES = 16 * 1024 * 1024;

/** The counts the suite's log at `path` reports, or undefined when there is no log to read. */
export async function readLogCounts(path: string | undefined): Promise<RunCounts | undefined> {
  if (path === undefined) return undefined;
  try {
    return readRunCounts(await readBoundedText(path, { maxBytes: MAX_LOG_BYTES, tail: true }));
  } catch (error) {
    if (error instanceof UnsafeFileError) return undefined;
    throw error;
  }
}
