/**
 * The fake model provider speaks both streamed APIs the way the real CLIs read them, picks the
 * seat from the prompt and the turn from the tool results, and records the credentials sent.
 * (The real CLIs against it: test/agents/real-story.test.ts.)
 */
import { until } from "../poll.js";
import { startFakeProvider, type FakeProvider } from "./index.js";

let provider: FakeProvider;

beforeAll(async () => {
  provider = await startFakeProvider({
    script: {
      implementer: [
        { kind: "shell", command: "echo hi > a.txt" },
        { kind: "answer", text: "Done here." },
      ],
      verifier: [{ kind: "status", status: 500, errorType: "api_error" }],
      tester: [{ kind: "hang" }],
    },
    usage: { input: 7, output: 3 },
  });
});
afterAll(() => provider.stop());

/** The `data:` payloads of a server-sent events body. */
function events(body: string): { type: string; [key: string]: unknown }[] {
  return body
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as { type: string });
}

const post = (path: string, headers: Record<string, string>, body: unknown): Promise<Response> =>
  fetch(`${provider.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("the fake model provider", () => {
  it("streams an Anthropic tool_use turn (input_json_delta in pieces, stop_reason, usage), then the answer after the tool result", async () => {
    const prompt = { role: "user", content: [{ type: "text", text: "# Implementer\n\nYou are the implementer. Do it." }] };
    const tools = [{ name: "Bash" }, { name: "Write" }];
    const first = events(await (await post("/v1/messages", { "x-api-key": "sk-ant-1" }, { model: "m", stream: true, messages: [prompt], tools })).text());
    expect(first.map((event) => event.type)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const json = first
      .filter((event) => event.type === "content_block_delta")
      .map((event) => (event.delta as { partial_json: string }).partial_json)
      .join("");
    expect(JSON.parse(json)).toMatchObject({ command: "echo hi > a.txt" });
    expect(first[6]).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { output_tokens: 3 } });

    const toolResult = { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "" }] };
    const second = events(
      await (
        await post("/v1/messages", { "x-api-key": "sk-ant-1" }, { stream: true, messages: [prompt, { role: "assistant", content: [] }, toolResult], tools })
      ).text(),
    );
    expect(second.find((event) => event.type === "message_delta")).toMatchObject({ delta: { stop_reason: "end_turn" } });
    expect(provider.turnsOf("implementer").map((request) => [request.turn, request.answered, request.apiKey])).toEqual([
      [0, "shell", "sk-ant-1"],
      [1, "answer", "sk-ant-1"],
    ]);
  });

  it("streams an OpenAI Responses turn: created, output_item added/done, completed with usage; a custom exec tool gets JavaScript", async () => {
    const input = [
      { type: "additional_tools", role: "developer", tools: [{ type: "namespace", name: "functions", tools: [{ type: "custom", name: "exec" }] }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "You are the implementer." }] },
    ];
    const body = events(await (await post("/v1/responses", { authorization: "Bearer sk-oa-1" }, { model: "m", stream: true, input })).text());
    expect(body.map((event) => event.type)).toEqual(["response.created", "response.output_item.added", "response.output_item.done", "response.completed"]);
    expect(body[2]).toMatchObject({ item: { type: "custom_tool_call", name: "exec", input: expect.stringContaining('"echo hi > a.txt"') } });
    expect(body[3]).toMatchObject({ response: { status: "completed", usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } } });
    expect(provider.requests.at(-1)).toMatchObject({ api: "openai", seat: "implementer", turn: 0, authorization: "Bearer sk-oa-1" });
  });

  it("answers a scripted status, leaves a hanging request open until stopped, and 404s what it does not know", async () => {
    const verifier = { messages: [{ role: "user", content: "You are the verifier." }], tools: [{ name: "Bash" }], stream: true };
    const failed = await post("/v1/messages", {}, verifier);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect((await fetch(`${provider.url}/v1/models`)).status).toBe(404);

    const hanging = await startFakeProvider({ script: { tester: [{ kind: "hang" }] } });
    const pending = fetch(`${hanging.url}/v1/messages`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "You are the tester." }], tools: [{ name: "Bash" }] }),
    });
    await until("the hanging request to arrive", () => hanging.requests.length > 0);
    await hanging.stop();
    await expect(pending).rejects.toThrow();
  });
});
