import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_TRANSCRIPT_LINE_BYTES, redactAgentText, splitTranscript } from "../../src/agents/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(() => removeTempDirs());

const KEY = "sk-ant-transcript-secret-key";
const redact = (text: string): string => redactAgentText(text, [KEY]).split("app-webhook-secret").join("[REDACTED]");

function logOf(lines: readonly string[]): { log: string; transcript: string } {
  const dir = makeTempDir("harness-transcript-");
  const log = join(dir, "agent.log");
  writeFileSync(log, `${lines.join("\n")}\n`);
  return { log, transcript: join(dir, "transcript.jsonl") };
}

const transcriptLines = (path: string): unknown[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as unknown);

describe("splitTranscript", () => {
  it("Claude Code: keeps every event, the result's answer in agent.log, the result's turns and tokens (cached input counted)", async () => {
    const { log, transcript } = logOf([
      JSON.stringify({ type: "system", subtype: "init", tools: ["Bash"] }),
      JSON.stringify({
        type: "assistant",
        message: { id: "m1", content: [{ type: "tool_use", input: { command: `echo ${KEY}` } }], usage: { input_tokens: 100, output_tokens: 20 } },
      }),
      JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", content: "app-webhook-secret" }] } }),
      JSON.stringify({ type: "assistant", message: { id: "m2", content: [{ type: "text", text: "Done" }], usage: { input_tokens: 100, output_tokens: 20 } } }),
      JSON.stringify({
        type: "result",
        subtype: "success",
        num_turns: 2,
        result: `Implemented with ${KEY}.`,
        usage: { input_tokens: 150, cache_read_input_tokens: 50, output_tokens: 40 },
      }),
    ]);
    const usage = await splitTranscript(log, transcript, "claude-stream-json", redact);
    expect(usage).toEqual({ turns: 2, inputTokens: 200, outputTokens: 40, badLines: 0 });
    const events = transcriptLines(transcript);
    expect(events).toHaveLength(5);
    expect(readFileSync(transcript, "utf8")).not.toMatch(/sk-ant-transcript|app-webhook-secret/);
    expect(events[1]).toMatchObject({ message: { content: [{ input: { command: "echo [REDACTED]" } }] } });
    expect(readFileSync(log, "utf8")).toBe("Implemented with [REDACTED].\n");
  });

  it("Claude Code without a result event (stopped): the messages seen, each counted once however many events repeat it", async () => {
    const message = (id: string) => JSON.stringify({ type: "assistant", message: { id, usage: { input_tokens: 10, output_tokens: 3 } } });
    const { log, transcript } = logOf([message("a"), message("a"), message("b")]);
    expect(await splitTranscript(log, transcript, "claude-stream-json", redact)).toEqual({ turns: 2, inputTokens: 20, outputTokens: 6, badLines: 0 });
  });

  it("Codex: items are turns, usage summed over turn.completed, the last agent message is the answer; a failure's words when it failed", async () => {
    const { log, transcript } = logOf([
      JSON.stringify({ type: "thread.started", thread_id: "t" }),
      JSON.stringify({ type: "turn.started" }),
      JSON.stringify({ type: "item.completed", item: { type: "reasoning", text: "hm" } }),
      JSON.stringify({ type: "item.completed", item: { type: "command_execution", command: "ls" } }),
      JSON.stringify({ type: "item.completed", item: { type: "agent_message", text: "Implemented." } }),
      JSON.stringify({ type: "turn.completed", usage: { input_tokens: 200, cached_input_tokens: 0, output_tokens: 40 } }),
    ]);
    expect(await splitTranscript(log, transcript, "codex-json", redact)).toEqual({ turns: 2, inputTokens: 200, outputTokens: 40, badLines: 0 });
    expect(readFileSync(log, "utf8")).toBe("Implemented.\n");
    const failed = logOf([JSON.stringify({ type: "turn.failed", error: { message: "stream disconnected" } })]);
    await splitTranscript(failed.log, failed.transcript, "codex-json", redact);
    expect(readFileSync(failed.log, "utf8")).toBe("stream disconnected\n");
  });

  it("a line that is not JSON is counted and kept (redacted) in both files, never a crash; a huge event is kept cut", async () => {
    const huge = JSON.stringify({ type: "user", message: { content: "x".repeat(3 * MAX_TRANSCRIPT_LINE_BYTES) } });
    const { log, transcript } = logOf([`bwrap: execvp claude: No such file or directory ${KEY}`, "{not json", '"a string"', huge]);
    const usage = await splitTranscript(log, transcript, "claude-stream-json", redact);
    expect(usage).toEqual({ turns: 0, inputTokens: 0, outputTokens: 0, badLines: 3 });
    const events = transcriptLines(transcript) as Record<string, unknown>[];
    expect(events.map((event) => event.type)).toEqual(["harness.not_json", "harness.not_json", "harness.not_json", "harness.cut"]);
    expect(events[0]).toEqual({ type: "harness.not_json", line: "bwrap: execvp claude: No such file or directory [REDACTED]" });
    for (const line of readFileSync(transcript, "utf8").split("\n")) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(MAX_TRANSCRIPT_LINE_BYTES);
    expect(readFileSync(log, "utf8")).toBe('bwrap: execvp claude: No such file or directory [REDACTED]\n{not json\n"a string"\n');
  });

  it("redacts an event with something to hide string by string, keys and escaped forms included, and an event without it in one call", async () => {
    const clean = { type: "system", subtype: "init", tools: ["Bash", "Read"], cwd: "/work", mcp_servers: [] };
    const hiding = { type: "user", message: { content: [{ type: "tool_result", content: "ok", [KEY]: ["app-webhook-secret", 7] }] } };
    // The CLI may print a secret \u-escaped: the line does not hold it as written, its string does.
    const escaped = JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text: `key ${KEY}` }] } }).replace(KEY, `\\u0073${KEY.slice(1)}`);
    expect(escaped).not.toContain(KEY);
    const { log, transcript } = logOf([JSON.stringify(clean), JSON.stringify(hiding), escaped]);
    const calls: string[] = [];
    await splitTranscript(log, transcript, "claude-stream-json", (text) => {
      calls.push(text);
      return redact(text);
    });
    const [keptClean, keptHiding, keptEscaped] = transcriptLines(transcript);
    expect(keptClean).toEqual(clean);
    expect(keptHiding).toEqual({ type: "user", message: { content: [{ type: "tool_result", content: "ok", "[REDACTED]": ["[REDACTED]", 7] }] } });
    expect(keptEscaped).toEqual({ type: "assistant", message: { content: [{ type: "text", text: "key [REDACTED]" }] } });
    expect(readFileSync(transcript, "utf8")).not.toContain(KEY.slice(1));
    // The clean event: one call for its strings joined; the others: one such call, then one per string.
    expect(calls[0]).toBe(["type", "system", "subtype", "init", "tools", "Bash", "Read", "cwd", "/work", "mcp_servers"].join("\n"));
    expect(calls[1]).toBe(["type", "user", "message", "content", "type", "tool_result", "content", "ok", KEY, "app-webhook-secret"].join("\n"));
    expect(calls[2]).toBe("type");
  });

  it("splits a small log (read whole) and one over 1 MiB (streamed) alike: every line ending, each event redacted, the answer last", async () => {
    const endings = ["\n", "\r\n", "\r"];
    const event = (index: number): string =>
      JSON.stringify({
        type: "assistant",
        message: { id: `m${index}`, content: [{ type: "text", text: `${"y".repeat(500)} ${KEY}` }], usage: { output_tokens: 1 } },
      });
    for (const count of [9, 3000]) {
      const dir = makeTempDir("harness-transcript-");
      const log = join(dir, "agent.log");
      const transcript = join(dir, "transcript.jsonl");
      const body = Array.from({ length: count }, (_, index) => `${event(index)}${endings[index % 3] ?? ""}`).join("");
      writeFileSync(log, `${body}stderr words ${KEY}\r${JSON.stringify({ type: "result", result: `done ${KEY}`, num_turns: count, usage: {} })}\n`);
      expect(Buffer.byteLength(readFileSync(log)) > 1024 * 1024).toBe(count === 3000);
      expect(await splitTranscript(log, transcript, "claude-stream-json", redact)).toEqual({ turns: count, inputTokens: 0, outputTokens: 0, badLines: 1 });
      const kept = readFileSync(transcript, "utf8");
      expect(kept.split("\n").filter((line) => line !== "")).toHaveLength(count + 2);
      expect(kept).not.toContain(KEY);
      expect(readFileSync(log, "utf8")).toBe("stderr words [REDACTED]\ndone [REDACTED]\n");
    }
  });
});
