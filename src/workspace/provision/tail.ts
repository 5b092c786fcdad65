/**
 * The provisioning log tail a maintainer reads: the package manager's error lines, wherever
 * they are in the log, then its last lines. npm prints the cause ("npm error Missing:
 * left-pad@1.3.0 from lock file") early and two hundred lines of usage text after it, so the
 * last lines alone are the wrong ones.
 */
import { readBoundedTextSync } from "../../files/index.js";
import { DEFAULT_TAIL_BYTES, DEFAULT_TAIL_LINES, tailText } from "../../exec/index.js";

/**
 * Lines that carry the cause: npm's `code`, `Missing:`-style and "can only install" lines
 * (not its usage text, which is also prefixed `npm error`), pnpm's ERR_PNPM_ codes, yarn's
 * and cargo's `error`, git's `fatal:`, a shell's "not found".
 */
const ERROR_LINE =
  /(npm (ERR!|error) (code|errno|[A-Za-z][\w-]*:)|ERR_PNPM_|^\s*error(\[E?\d+\])?:|^\s*error\s|^\s*ERROR:|^\s*yarn(pkg)? error |fatal:|: (command )?not found|\b(can only install|Cannot find module|ERESOLVE|E404|ENOENT|EACCES|ENOTFOUND|ETIMEDOUT|ECONNREFUSED)\b)/;
/** Most error lines kept, and most characters of each. */
const MAX_ERROR_LINES = 8;
const MAX_LINE_CHARS = 1000;
/** A log larger than this is not read whole; its tail alone is shown. */
const MAX_LOG_BYTES = 16 * 1024 * 1024;

/**
 * The bounded tail of a failed provisioning (at most 20 lines, 64 KiB): error lines found in
 * `logPath` that the last lines do not already show, a marker, then the last lines. Without
 * error lines (or a readable log) it is the last lines as they were.
 */
export function provisionLogTail(logPath: string, lastLines: string): string {
  const bounded = tailText(Buffer.from(lastLines), DEFAULT_TAIL_LINES, DEFAULT_TAIL_BYTES);
  const log = readSmallLog(logPath);
  if (log === undefined) return bounded;
  const shown = new Set(bounded.split("\n").map((line) => line.trim()));
  const errors: string[] = [];
  for (const raw of stripEscapes(log).split(/\r?\n/)) {
    const line = raw.trimEnd().slice(0, MAX_LINE_CHARS);
    if (!ERROR_LINE.test(line) || shown.has(line.trim()) || errors.includes(line)) continue;
    errors.push(line);
    if (errors.length === MAX_ERROR_LINES) break;
  }
  if (errors.length === 0) return bounded;
  const room = DEFAULT_TAIL_LINES - errors.length - 1;
  const last = bounded.split("\n").slice(-room);
  const combined = [...errors, "[… the error lines above come from earlier in the log; its last lines follow …]", ...last].join("\n");
  return Buffer.byteLength(combined) <= DEFAULT_TAIL_BYTES ? combined : bounded;
}

function readSmallLog(path: string): string | undefined {
  try {
    // The App's own log (a sandboxed step writes only through its output), read bounded all the same.
    return readBoundedTextSync(path, { maxBytes: MAX_LOG_BYTES });
  } catch {
    // No log, or one that cannot be read: the last lines stand alone.
  }
  return undefined;
}

function stripEscapes(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, "");
}
