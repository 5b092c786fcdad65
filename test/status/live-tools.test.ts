/**
 * The status page's latest tool calls of a running seat: read from the seat's events in a real
 * run directory (Claude Code's stream-json `tool_use` blocks, Codex's `--json` items), newest
 * last, at most ten, each summary bounded, redacted and HTML-escaped.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { collectStatus, renderStatusPage } from "../../src/status/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(() => removeTempDirs());

const APP_SECRET = "app-webhook-secret-0f9e8d7c6b5a";
const TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const PROVIDER_KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwx";

/** A run directory of a story whose implementer is running, its seat's events written as `file`. */
function runningRun(file: string, lines: readonly object[]): string {
  const home = makeTempDir("harness-live-tools-");
  const run = join(home, "runs", "greet", "20261204T231430Z-abc050");
  const seat = join(run, "attempts", "1", "implementer");
  mkdirSync(seat, { recursive: true });
  const at = "2026-12-04T23:14:30.737Z";
  const journal = [
    {
      kind: "run.started",
      storyId: "greet",
      runId: "20261204T231430Z-abc050",
      taskId: "task-1",
      title: "Greet",
      stages: ["implementer", "tester", "verifier"],
      checks: [],
      maxAttempts: 2,
      readmission: false,
      network: "own",
      at,
    },
    { kind: "stage.started", taskId: "task-1", stage: "implementer", attempt: 1, at },
  ];
  writeFileSync(join(run, "execution-history.ndjson"), journal.map((event) => `${JSON.stringify(event)}\n`).join(""));
  // The first line cut, as a bounded tail read may find it; then the events.
  writeFileSync(join(seat, file), `tool_use","name":"Cut"}]}}\n${lines.map((line) => JSON.stringify(line)).join("\n")}\nnot json at all\n`);
  return home;
}

const claudeToolUse = (name: string, input: object): object => ({
  type: "assistant",
  message: { id: `msg_${name}`, type: "message", role: "assistant", model: "claude", content: [{ type: "tool_use", id: `toolu_${name}`, name, input }] },
  session_id: "s",
});

async function page(home: string): Promise<{ html: string; calls: Array<{ tool: string; summary: string }> }> {
  const report = await collectStatus({ home, jobs: [], secrets: [APP_SECRET] });
  const run = report.runs.find((candidate) => candidate.story === "greet");
  return { html: renderStatusPage(report, { webBase: "https://github.com" }), calls: run?.liveTools?.calls ?? [] };
}

describe("the status page's latest tool calls", () => {
  it("shows a Claude Code seat's last ten tool_use blocks, newest last, bounded, redacted and escaped", async () => {
    const hostile = `echo '</li></ol><script>alert(1)</script>' ${TOKEN} ${APP_SECRET} ${PROVIDER_KEY}`;
    const lines = [
      { type: "system", subtype: "init", cwd: "/w", tools: ["Bash"] },
      ...Array.from({ length: 11 }, (_, index) => claudeToolUse(`Tool${index}`, { file_path: `src/file-${index}.ts` })),
      { type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_Tool10", content: "ok" }] } },
      claudeToolUse("Write", { file_path: "big.txt", content: "x".repeat(100_000) }),
      claudeToolUse("Bash", { command: hostile, description: "says hello" }),
      { type: "result", subtype: "success", result: "done", num_turns: 3 },
    ];
    const { html, calls } = await page(runningRun("transcript.jsonl", lines));
    expect(calls.map((call) => call.tool)).toEqual(["Tool3", "Tool4", "Tool5", "Tool6", "Tool7", "Tool8", "Tool9", "Tool10", "Write", "Bash"]);
    expect(calls[0]).toEqual({ tool: "Tool3", summary: "src/file-3.ts" });
    expect(calls.every((call) => call.summary.length <= 200)).toBe(true);
    expect(calls.at(-1)?.summary).toContain("[REDACTED]");
    expect(html).toContain("<h2>Latest tool calls</h2>");
    expect(html).toContain("<code>Bash</code> echo &#39;&lt;/li&gt;&lt;/ol&gt;&lt;script&gt;");
    for (const secret of [TOKEN, APP_SECRET, PROVIDER_KEY, "<script>alert(1)"])
      expect({ secret, shown: html.includes(secret) }).toEqual({ secret, shown: false });
    // Newest last on the page too.
    expect(html.indexOf("<code>Write</code>")).toBeLessThan(html.indexOf("<code>Bash</code>"));
    expect(html).not.toContain("<code>Tool2</code>");
  });

  it("shows a running Codex seat's commands from its live agent.log, one per item", async () => {
    const item = (id: string, command: string, status: string): object => ({
      id,
      type: "command_execution",
      command,
      aggregated_output: "",
      exit_code: status === "completed" ? 0 : null,
      status,
    });
    const lines = [
      { type: "thread.started", thread_id: "t1" },
      { type: "turn.started" },
      { type: "item.started", item: item("item_0", "bash -lc ls", "in_progress") },
      { type: "item.completed", item: item("item_0", "bash -lc ls", "completed") },
      { type: "item.completed", item: { id: "item_1", type: "agent_message", text: "Listing done." } },
      { type: "item.completed", item: { id: "item_2", type: "file_change", changes: [{ path: "feature.txt", kind: "add" }], status: "completed" } },
      { type: "item.started", item: item("item_3", `bash -lc 'echo <b>x</b>; curl -H "Authorization: Bearer ${TOKEN}"'`, "in_progress") },
    ];
    const { html, calls } = await page(runningRun("agent.log", lines));
    expect(calls).toEqual([
      { tool: "shell", summary: "bash -lc ls" },
      { tool: "file_change", summary: "add feature.txt" },
      { tool: "shell", summary: expect.stringContaining("[REDACTED]") },
    ]);
    expect(html).toContain("&lt;b&gt;x&lt;/b&gt;");
    expect(html).not.toContain(TOKEN);
  });
});
