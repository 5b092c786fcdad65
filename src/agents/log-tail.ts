/**
 * The last lines of an agent's log, for a blocked seat's report (the CLI's output, the check
 * run, the status comment): what the CLI last said is usually why it stopped, and without it a
 * user sees "exited 1" while `bwrap: execvp claude: No such file or directory` sits in a file.
 */
import { open } from "node:fs/promises";
import { stripAnsi } from "../text/index.js";

/** How much of the log's end is read. */
const WINDOW_BYTES = 16 * 1024;

const REDACTED = "[REDACTED]";

// Credentials a CLI may print in its own words (a request it logs, a key it echoes).
const CREDENTIAL_PATTERNS: readonly [RegExp, string][] = [
  [/(\b(?:authorization|x-api-key|api[_-]?key)\s*[:=]\s*)[^\s"',]+(?:\s+[^\s"',]+)?/gi, `$1${REDACTED}`],
  [/(\bbearer\s+)[A-Za-z0-9._~+/=-]+/gi, `$1${REDACTED}`],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, REDACTED],
];

/**
 * Returns the last `lines` lines of `logPath` (ANSI stripped), with every value of `secrets`
 * (the agent's credentials, at least 8 characters) and credential-looking words replaced.
 * An unreadable log gives "".
 */
export async function agentLogTail(logPath: string, secrets: readonly string[], lines = 12): Promise<string> {
  let text: string;
  try {
    const handle = await open(logPath, "r");
    try {
      const { size } = await handle.stat();
      const start = Math.max(0, size - WINDOW_BYTES);
      const buffer = Buffer.alloc(size - start);
      await handle.read(buffer, 0, buffer.length, start);
      text = buffer.toString("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    return "";
  }
  const tail = stripAnsi(text)
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "")
    .slice(-lines)
    .join("\n");
  return redactAgentText(tail, secrets);
}

/** `text` with every value of `secrets` (at least 8 characters) and credential-looking words replaced. */
export function redactAgentText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets.filter((value) => value.length >= 8).sort((a, b) => b.length - a.length)) out = out.split(secret).join(REDACTED);
  for (const [pattern, replacement] of CREDENTIAL_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** The sentence a blocked seat's reason ends with: the log's path and its last lines (none when empty). */
export function withLogTail(reason: string, logPath: string, tail: string): string {
  return tail === "" ? `${reason} (agent log: ${logPath}, empty)` : `${reason}\n\nthe last lines of the agent log (${logPath}):\n${tail}`;
}
