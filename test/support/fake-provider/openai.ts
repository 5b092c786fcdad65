/**
 * The OpenAI Responses API as Codex calls it (`POST /v1/responses`, streamed): `response.created`,
 * one output item (`response.output_item.added` / `.done`: a function call of the CLI's shell
 * tool, or an assistant message), then `response.completed` with the usage.
 */
import type { Step } from "./script.js";
import { sse, type Answer, type Usage } from "./wire.js";

interface Item {
  type?: string;
  role?: string;
  tools?: Tool[];
  content?: string | { type?: string; text?: string }[];
}
interface Tool {
  type?: string;
  name?: string;
  tools?: Tool[];
}
/** The part of a Responses request the fake reads. */
export interface ResponsesRequest {
  model?: string;
  input?: string | Item[];
  tools?: Tool[];
}

const OUTPUTS = new Set(["function_call_output", "custom_tool_call_output", "local_shell_call_output"]);

function textOf(item: Item): string {
  if (typeof item.content === "string") return item.content;
  return (item.content ?? []).map((part) => part.text ?? "").join("\n");
}

/** The users' text (the seat's prompt is among it) and the turn (tool outputs so far). */
export function readResponses(body: ResponsesRequest): { prompt: string; turn: number; tools: boolean } {
  const input = typeof body.input === "string" ? [{ type: "message", role: "user", content: body.input }] : (body.input ?? []);
  const prompt = input
    .filter((item) => item.role === "user")
    .map(textOf)
    .join("\n");
  return { prompt, turn: input.filter((item) => OUTPUTS.has(item.type ?? "")).length, tools: toolsOf(body).length > 0 };
}

/** Every tool offered: the request's own, and those Codex 0.171 sends as an `additional_tools` input item (in namespaces). */
function toolsOf(body: ResponsesRequest): Tool[] {
  const input = typeof body.input === "string" ? [] : (body.input ?? []);
  const offered = [...(body.tools ?? []), ...input.flatMap((item) => (item.type === "additional_tools" ? (item.tools ?? []) : []))];
  const flat = (tools: readonly Tool[]): Tool[] => tools.flatMap((tool) => (tool.type === "namespace" ? flat(tool.tools ?? []) : [tool]));
  return flat(offered);
}

/** The call of the CLI's own shell tool for `command`, in the shape its tool list declares. */
function shellCall(tools: readonly Tool[], command: string, id: string): object | undefined {
  const names = new Set(tools.map((tool) => tool.name));
  // Codex 0.171's "code mode": one custom tool running JavaScript that calls the nested shell tool.
  if (tools.some((tool) => tool.type === "custom" && tool.name === "exec")) {
    const source = `text(await tools.exec_command({ cmd: ${JSON.stringify(command)}, yield_time_ms: 10000 }));`;
    return { type: "custom_tool_call", id: `ctc_${id}`, call_id: `call_${id}`, name: "exec", input: source, status: "completed" };
  }
  const call = (name: string, args: object): object => ({
    type: "function_call",
    id: `fc_${id}`,
    call_id: `call_${id}`,
    name,
    arguments: JSON.stringify(args),
    status: "completed",
  });
  if (names.has("exec_command")) return call("exec_command", { cmd: command, yield_time_ms: 10_000 });
  if (names.has("shell_command")) return call("shell_command", { command });
  if (names.has("shell")) return call("shell", { command: ["bash", "-lc", command] });
  return undefined;
}

/** The streamed answer to one request at one step. */
export function responsesAnswer(body: ResponsesRequest, step: Step, id: string, usage: Usage): Answer {
  if (step.kind === "status")
    return { status: step.status, json: { error: { type: step.errorType, code: step.errorType, message: `fake provider: ${step.status}` } } };
  const item =
    step.kind === "shell"
      ? shellCall(toolsOf(body), step.command, id)
      : {
          type: "message",
          id: `msg_${id}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: step.kind === "answer" ? step.text : "", annotations: [] }],
        };
  if (item === undefined)
    return { status: 400, json: { error: { type: "invalid_request_error", message: "fake provider: the request offers no shell tool" } } };
  const response = {
    id: `resp_${id}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    model: body.model ?? "gpt-fake",
    status: "in_progress",
    output: [] as object[],
  };
  const apiUsage = {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + usage.output,
  };
  return {
    status: 200,
    stream: [
      sse("response.created", { type: "response.created", sequence_number: 0, response }),
      sse("response.output_item.added", { type: "response.output_item.added", sequence_number: 1, output_index: 0, item }),
      sse("response.output_item.done", { type: "response.output_item.done", sequence_number: 2, output_index: 0, item }),
      sse("response.completed", {
        type: "response.completed",
        sequence_number: 3,
        response: { ...response, status: "completed", output: [item], usage: apiUsage },
      }),
    ],
  };
}
