/**
 * The Anthropic Messages API as Claude Code calls it (`POST /v1/messages`, streamed): a turn is
 * one assistant message, a tool call streamed as `tool_use` with `input_json_delta`, and a
 * `message_delta` with the stop reason and the usage.
 */
import type { Step } from "./script.js";
import { sse, type Answer, type Usage } from "./wire.js";

interface Block {
  type?: string;
  text?: string;
}
interface Message {
  role?: string;
  content?: string | Block[];
}
/** The part of a Messages request the fake reads. */
export interface MessagesRequest {
  model?: string;
  stream?: boolean;
  messages?: Message[];
  tools?: { name?: string }[];
}

function textOf(message: Message | undefined): string {
  if (message === undefined) return "";
  if (typeof message.content === "string") return message.content;
  return (message.content ?? []).map((block) => (block.type === "text" ? (block.text ?? "") : "")).join("\n");
}

/** The text the seat's prompt is in (the first user message) and the turn (tool results so far). */
export function readMessages(body: MessagesRequest): { prompt: string; turn: number; tools: boolean } {
  const messages = body.messages ?? [];
  const turn = messages.reduce(
    (count, message) => count + (Array.isArray(message.content) ? message.content.filter((b) => b.type === "tool_result").length : 0),
    0,
  );
  return { prompt: textOf(messages.find((message) => message.role === "user")), turn, tools: (body.tools ?? []).length > 0 };
}

/** The streamed (or, when not asked to stream, whole) answer to one request at one step. */
export function messagesAnswer(body: MessagesRequest, step: Step, id: string, usage: Usage): Answer {
  const model = body.model ?? "claude-fake";
  if (step.kind === "status")
    return { status: step.status, json: { type: "error", error: { type: step.errorType, message: `fake provider: ${step.status}` } } };
  const tool = step.kind === "shell";
  if (tool && !(body.tools ?? []).some((t) => t.name === "Bash"))
    return { status: 400, json: { type: "error", error: { type: "invalid_request_error", message: "fake provider: the request offers no Bash tool" } } };
  const content = tool
    ? { type: "tool_use", id: `toolu_${id}`, name: "Bash", input: { command: step.command, description: "run a command" } }
    : { type: "text", text: step.kind === "answer" ? step.text : "" };
  const stopReason = tool ? "tool_use" : "end_turn";
  const apiUsage = { input_tokens: usage.input, output_tokens: usage.output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (body.stream !== true) {
    return {
      status: 200,
      json: { id: `msg_${id}`, type: "message", role: "assistant", model, content: [content], stop_reason: stopReason, stop_sequence: null, usage: apiUsage },
    };
  }
  const start = tool ? { ...content, input: {} } : { type: "text", text: "" };
  const delta = tool
    ? { type: "input_json_delta", partial_json: JSON.stringify(content.type === "tool_use" ? content.input : {}) }
    : { type: "text_delta", text: content.type === "text" ? content.text : "" };
  const events = [
    sse("message_start", {
      type: "message_start",
      message: {
        id: `msg_${id}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...apiUsage, output_tokens: 1 },
      },
    }),
    sse("content_block_start", { type: "content_block_start", index: 0, content_block: start }),
    sse("ping", { type: "ping" }),
    // The JSON of a tool's input arrives in pieces, as the real API sends it: a client must join them.
    ...splitDelta(delta).map((piece) => sse("content_block_delta", { type: "content_block_delta", index: 0, delta: piece })),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output } }),
    sse("message_stop", { type: "message_stop" }),
  ];
  return { status: 200, stream: events };
}

function splitDelta(delta: { type: string; partial_json?: string; text?: string }): object[] {
  const whole = delta.partial_json ?? delta.text ?? "";
  const middle = Math.floor(whole.length / 2);
  const parts = whole.length < 2 ? [whole] : [whole.slice(0, middle), whole.slice(middle)];
  return parts.map((part) => (delta.type === "input_json_delta" ? { type: delta.type, partial_json: part } : { type: delta.type, text: part }));
}
