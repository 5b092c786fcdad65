/**
 * The latest tool calls of a running seat, read from the end of its `transcript.jsonl` (the
 * CLI's own events, as src/agents/transcript.ts keeps them): Claude Code's stream-json
 * `assistant` events carry `tool_use` blocks (a tool's name and its input); Codex's `--json`
 * events carry items (`command_execution`, `mcp_tool_call`, `file_change`, `web_search`),
 * announced by `item.started` and closed by `item.completed`. Pure: the caller reads the bytes.
 */
import { stripAnsi } from "../text/index.js";

/** Tool calls shown per running seat, newest last. */
export const LIVE_TOOL_CALLS = 10;
/** Characters of a tool call's summary shown. */
export const TOOL_SUMMARY_CHARS = 200;

/** One tool call: the tool's name and a short summary of its input (redacted by `redact`, then bounded). */
export interface ToolCall {
  tool: string;
  summary: string;
}

/** The keys of a tool's input that say what it does, in the order they are preferred. */
const TELLING_KEYS = ["command", "file_path", "path", "pattern", "url", "query", "description", "prompt"] as const;

/**
 * The last {@link LIVE_TOOL_CALLS} tool calls in `text` (the end of a transcript; its first line
 * may be cut and is then skipped as any line that is not an event). `redact` is applied to a
 * call's whole summary before it is cut, so a secret is never shown in part.
 */
export function latestToolCalls(text: string, redact: (text: string) => string): ToolCall[] {
  const calls: ToolCall[] = [];
  // Codex announces an item and completes it: one call per item id.
  const seen = new Set<string>();
  for (const line of text.split("\n")) {
    const event = parse(line);
    if (event === undefined) continue;
    for (const call of callsOf(event, seen)) calls.push(call);
  }
  return calls.slice(-LIVE_TOOL_CALLS).map((call) => ({ tool: bound(redact(call.tool), 80), summary: bound(redact(call.summary), TOOL_SUMMARY_CHARS) }));
}

type Json = Record<string, unknown>;

function parse(line: string): Json | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function callsOf(event: Json, seen: Set<string>): ToolCall[] {
  if (event.type === "assistant" && isObject(event.message) && Array.isArray(event.message.content)) {
    return event.message.content
      .filter((block): block is Json => isObject(block) && block.type === "tool_use")
      .map((block) => ({ tool: text(block.name) || "tool", summary: summaryOf(block.input) }));
  }
  if ((event.type === "item.started" || event.type === "item.completed") && isObject(event.item)) {
    const item = event.item;
    const id = text(item.id);
    if (id !== "" && seen.has(id)) return [];
    const call = codexCall(item);
    if (call === undefined) return [];
    if (id !== "") seen.add(id);
    return [call];
  }
  return [];
}

function codexCall(item: Json): ToolCall | undefined {
  switch (item.type) {
    case "command_execution":
      return { tool: "shell", summary: text(item.command) };
    case "mcp_tool_call":
      return { tool: [text(item.server), text(item.tool)].filter((part) => part !== "").join(".") || "mcp", summary: summaryOf(item.arguments) };
    case "file_change":
      return {
        tool: "file_change",
        summary: Array.isArray(item.changes)
          ? item.changes
              .filter(isObject)
              .map((change) => `${text(change.kind)} ${text(change.path)}`.trim())
              .join(", ")
          : "",
      };
    case "web_search":
      return { tool: "web_search", summary: text(item.query) };
    default:
      return undefined;
  }
}

/** What a tool's input says it does: its telling key's value, or the input as JSON. */
function summaryOf(input: unknown): string {
  if (typeof input === "string") return input;
  if (!isObject(input)) return "";
  for (const key of TELLING_KEYS) if (typeof input[key] === "string") return input[key];
  // The input came from a bounded read; its JSON is cut to a few summaries' worth before it is redacted and bounded.
  return JSON.stringify(input).slice(0, TOOL_SUMMARY_CHARS * 4);
}

/** One line, escapes stripped, at most `max` characters. */
function bound(value: string, max: number): string {
  const line = stripAnsi(value).replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
