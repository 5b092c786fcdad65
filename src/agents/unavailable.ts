/**
 * An agent that could not work at all is not a failed attempt of the change: the provider
 * was unreachable, the CLI had no credentials, the account is rate limited, or the CLI
 * refused to run as root. Each CLI's own words are recognised here, in one place; the
 * messages are the installed CLIs' own (Claude Code 2.1.332, Codex 0.171.0: the versions
 * test/agents/real-cli.test.ts installs from npm and runs without a network, without
 * credentials, against a loopback provider answering 401, 429 and 500, and as root).
 */
import { stripAnsi } from "../text/index.js";
import { parseResetTime } from "./reset-time.js";

/** Why an agent could not work. */
export type UnavailableReason = "not-installed" | "root-refused" | "auth-missing" | "rate-limited" | "provider-unreachable";

/** An agent found unavailable, with the line that said so and, when given, the reset time. */
export interface AgentUnavailable {
  reason: UnavailableReason;
  /** The CLI's line (ANSI stripped, at most 300 characters). */
  message: string;
  /** ISO-8601 time the limit resets, when the CLI said it. */
  resetAt?: string;
}

interface Rule {
  reason: UnavailableReason;
  pattern: RegExp;
  /** A line the CLI repeats while it waits: the seat is stopped as soon as it is seen. */
  loops?: boolean;
}

const RULES: readonly Rule[] = [
  // A CLI that cannot start where it runs: Claude Code installed without its postinstall ("Error: claude
  // native binary not installed."), a program the sandbox does not show ("bwrap: execvp claude: No such
  // file or directory"), or a script whose interpreter it does not ("/usr/bin/env: 'node': No such file or directory").
  {
    reason: "not-installed",
    pattern: /native binary not installed|^bwrap: execvp \S+: No such file or directory|^\/usr\/bin\/env: \S+: No such file or directory/i,
  },
  // Claude Code as root: "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons".
  { reason: "root-refused", pattern: /cannot be used with root\/sudo privileges/i },
  // Claude Code without credentials: "Not logged in · Please run /login"; a key the provider
  // refuses: "Failed to authenticate. API Error: 401 …" (older: "Invalid API key").
  {
    reason: "auth-missing",
    pattern:
      /Not logged in\b.*\/login|Failed to authenticate|API Error: 401\b|Invalid API key|authentication_error|\b401 Unauthorized\b|Missing bearer or basic authentication/i,
  },
  // Claude Code: "You've hit your limit · resets 3pm (UTC)"; Codex: "You've hit your usage limit. … Try again at 3:05 PM."
  // A 429 without those words: "API Error: Request rejected (429) · …".
  {
    reason: "rate-limited",
    pattern:
      /You've hit your [^\n]*limit|You've reached your usage limit|usage limit reached|rate_limit_error|\b429\b[^\n]*(Too Many Requests|rate limit)|API Error:[^\n]*\(429\)|API Error: 429\b/i,
  },
  // Codex without a network loops on "ERROR: Reconnecting... waiting for network" until stopped.
  { reason: "provider-unreachable", pattern: /Reconnecting\.\.\. waiting for network/i, loops: true },
  // A provider's server error after the CLI's own retries: Claude Code "API Error: 500 … This is a
  // server-side issue"; Codex "ERROR: We’re currently experiencing high demand, which may cause
  // temporary errors." (what 0.171 prints for a 500), and for any other 5xx after its five reconnects
  // "unexpected status 529 <unknown status code>: …, url: …". The provider failed, not the change.
  { reason: "provider-unreachable", pattern: /API Error: 5\d\d\b|API Error:[^\n]*\(5\d\d\)|currently experiencing high demand|unexpected status 5\d\d\b/i },
  // A provider (or a proxy before it) that answers 200 with bytes that are not the API's events: Claude Code
  // 2.1.332 retries once without streaming, then says "API Error: API returned an empty or malformed response
  // (HTTP 200) — check for a proxy or gateway intercepting the request. …". Nothing of the change is at fault.
  // Codex 0.171 for the same, after its reconnects: "stream disconnected before completion: stream closed before response.completed".
  { reason: "provider-unreachable", pattern: /API Error: API returned an empty or malformed response|stream disconnected before completion/i },
  // Claude Code without a network: "API Error: Can't reach the API server — check your internet
  // or DNS (EAI_AGAIN)", "API Error: Connection refused — … (ECONNREFUSED)" (older: "Unable to
  // connect to API (ConnectionRefused)"); overload and outage.
  {
    reason: "provider-unreachable",
    pattern:
      /Unable to connect to API|API Error: (Connection refused|Can't reach the API server)|API Error:[^\n]*\((ECONNREFUSED|EAI_AGAIN|ENOTFOUND|ETIMEDOUT|ECONNRESET|ENETUNREACH)\)|failed to lookup address information|overloaded_error|\b529\b[^\n]*overloaded|currently experiencing high load/i,
  },
];

/**
 * Recognises an unavailable agent from its output. The last matching line decides (a CLI
 * that retried and then hit a limit is rate limited). Returns undefined for anything else:
 * an ordinary failure stays the change's.
 */
export function classifyAgentOutput(output: string, now: Date = new Date()): AgentUnavailable | undefined {
  const lines = stripAnsi(output).split(/\r?\n/).flatMap(wordsOf);
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = lines[index] ?? "";
    const rule = RULES.find((candidate) => candidate.pattern.test(line));
    if (!rule) continue;
    const message = line.trim().slice(0, 300);
    if (rule.reason !== "rate-limited") return { reason: rule.reason, message };
    const reset = parseResetTime(line, now);
    return { reason: rule.reason, message, ...(reset ? { resetAt: reset.toISOString() } : {}) };
  }
  return undefined;
}

/**
 * The words a line of a CLI's event stream carries (Claude Code's `result` event, Codex's
 * `error` and `turn.failed`), split into lines; any other line as it is. The rules match what
 * the CLI said, not the JSON around it.
 */
function wordsOf(line: string): string[] {
  if (!line.startsWith("{")) return [line];
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return [line];
  }
  if (typeof event !== "object" || event === null) return [line];
  const fields = event as { type?: unknown; result?: unknown; message?: unknown; error?: { message?: unknown } };
  const words =
    fields.type === "result" && typeof fields.result === "string"
      ? fields.result
      : fields.type === "error" && typeof fields.message === "string"
        ? fields.message
        : fields.type === "turn.failed" && typeof fields.error?.message === "string"
          ? fields.error.message
          : undefined;
  return words === undefined ? [line] : words.split(/\r?\n/);
}

/** True when the output shows a CLI waiting in a loop it will not leave by itself (no network). */
export function showsWaitingLoop(output: string): boolean {
  const text = stripAnsi(output);
  return RULES.some((rule) => rule.loops === true && rule.pattern.test(text));
}

/** How an ended seat is judged: unavailable, or an ordinary result for the stage to judge. */
export function classifySeatEnd(
  result: { exitCode: number | null; timedOut: boolean; tail: string; spawnError?: string; stoppedWaiting?: boolean },
  now: Date,
): AgentUnavailable | undefined {
  if (result.spawnError !== undefined) return { reason: "not-installed", message: result.spawnError.slice(0, 300) };
  if (result.exitCode === 0 && !result.timedOut && result.stoppedWaiting !== true) return undefined;
  return classifyAgentOutput(result.tail, now);
}
