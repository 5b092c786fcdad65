/**
 * A whole story with the real Claude Code CLI when its provider fails: an overloaded provider
 * (529) blocks the story as agent-unavailable, not a failed attempt; a verifier that writes a
 * verdict the schema refuses is `artifact-invalid` (asked once more, then the attempt fails);
 * a provider that accepts the request and never answers ends at the seat's configured timeout
 * as `agent-timeout`; a provider streaming bytes that are not the API's events is agent-unavailable (Claude
 * Code's "malformed response", Codex's "stream disconnected"), not a failed attempt. No case waits for time to pass: each asserts what the provider received
 * (the hang was reached before the timeout fired) and what the journal says.
 */
import { readFileSync } from "node:fs";
import { startFakeProvider, type FakeProvider, type Script } from "../support/fake-provider/index.js";
import { findFiles, providerAsSeenByStep, runRealStory, useRealStories, type StoryOptions, type StoryRun } from "./real-story.js";

const { clis, homes, providers } = useRealStories();

interface Event {
  kind: string;
  stage?: string;
  failureClass?: string;
  detail?: string;
}

/** A Claude Code story against a provider playing `script`, the CLI's own retries off. */
async function story(
  script: Script,
  options: StoryOptions = {},
  preset: "claude-code" | "codex" = "claude-code",
): Promise<{ run: StoryRun; fake: FakeProvider; journal: Event[] }> {
  const fake = await startFakeProvider({ script });
  providers.push(fake);
  const seen = providerAsSeenByStep(fake);
  const env: Record<string, string> =
    preset === "codex"
      ? { OPENAI_API_KEY: "sk-ant-story-key", OPENAI_BASE_URL: `${seen.url}/v1` }
      : { ANTHROPIC_API_KEY: "sk-ant-story-key", ANTHROPIC_BASE_URL: seen.url, CLAUDE_CODE_MAX_RETRIES: "0" };
  const run = await runRealStory(clis(), preset, env, seen.netAllow, "grep -qx hello feature.txt", options);
  homes.push(run.home);
  const journalPath = run.runDir === "" ? undefined : findFiles(run.runDir, "execution-history.ndjson")[0];
  if (journalPath === undefined) throw new Error(`the story left no journal:\n${run.stderr.slice(-3000)}`);
  const journal = readFileSync(journalPath, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Event);
  return { run, fake, journal };
}

const of = (journal: Event[], kind: string): Event[] => journal.filter((event) => event.kind === kind);

describe("a real CLI's provider failing in a whole story", () => {
  it("a 529 (overloaded) is agent-unavailable: the story blocks at once, no attempt failed", async () => {
    const { run, fake, journal } = await story({ implementer: [{ kind: "status", status: 529, errorType: "overloaded_error" }] });
    expect(fake.turnsOf("implementer").map((request) => request.answered)).toContain("status");
    expect(run.exitCode).toBe(1);
    expect(of(journal, "story.blocked")).toEqual([expect.objectContaining({ failureClass: "agent-unavailable" })]);
    expect(of(journal, "seat.unavailable")).toEqual([expect.objectContaining({ stage: "implementer", reason: "provider-unreachable" })]);
    expect(of(journal, "retry.scheduled")).toEqual([]);
    expect(of(journal, "attempt.archived")).toEqual([]);
    expect(fake.turnsOf("tester")).toEqual([]);
    expect(run.stderr).toMatch(/story blocked \(agent-unavailable\)/);
  }, 600_000);

  it("a provider that streams garbage is agent-unavailable in the CLI's words, without a hang, its transcript redacted", async () => {
    const { run, fake, journal } = await story({ implementer: [{ kind: "garbage" }] }, { maxAttempts: 1 });
    expect(fake.turnsOf("implementer").map((request) => request.answered)).toContain("garbage");
    // Claude Code's own words for bytes that are not the API's events: the provider's fault, not the change's.
    expect(of(journal, "seat.unavailable")).toEqual([
      expect.objectContaining({ stage: "implementer", reason: "provider-unreachable", message: expect.stringContaining("malformed response") }),
    ]);
    expect(of(journal, "story.blocked")).toEqual([expect.objectContaining({ failureClass: "agent-unavailable" })]);
    expect(of(journal, "attempt.archived")).toEqual([]);
    expect(fake.turnsOf("tester")).toEqual([]);
    expect(run.exitCode).toBe(1);
    const kept = [...findFiles(run.runDir, "transcript.jsonl"), ...findFiles(run.runDir, "agent.log")].map((path) => readFileSync(path, "utf8"));
    // The transcript and log were kept (they hold the CLI's final words), redacted: none holds the agent's key.
    expect(kept.join("\n")).toContain("malformed response");
    for (const text of kept) expect(text).not.toContain("sk-ant-story-key");
  }, 600_000);

  it("Codex: a provider that streams garbage is agent-unavailable after its reconnects, its transcript redacted", async () => {
    const { run, fake, journal } = await story({ implementer: [{ kind: "garbage" }] }, { maxAttempts: 1 }, "codex");
    // Codex reconnects on its own, then gives up: each request got garbage.
    expect(new Set(fake.turnsOf("implementer").map((request) => request.answered))).toEqual(new Set(["garbage"]));
    expect(of(journal, "seat.unavailable")).toEqual([
      expect.objectContaining({
        stage: "implementer",
        reason: "provider-unreachable",
        message: expect.stringContaining("stream disconnected before completion"),
      }),
    ]);
    expect(of(journal, "story.blocked")).toEqual([expect.objectContaining({ failureClass: "agent-unavailable" })]);
    expect(of(journal, "attempt.archived")).toEqual([]);
    expect(run.exitCode).toBe(1);
    const kept = [...findFiles(run.runDir, "transcript.jsonl"), ...findFiles(run.runDir, "agent.log")].map((path) => readFileSync(path, "utf8"));
    expect(kept.join("\n")).toContain("stream disconnected");
    for (const text of kept) expect(text).not.toContain("sk-ant-story-key");
  }, 600_000);

  it("a verifier that writes an invalid verdict is artifact-invalid, named in the blocked story's reason", async () => {
    const bad = { kind: "shell", command: `printf '%s' '{"verdict":"maybe"}' > "$HARNESS_ARTIFACT_DIR/verdict.json"` } as const;
    const { run, fake, journal } = await story(
      {
        implementer: [
          { kind: "shell", command: "printf 'hello\\n' > feature.txt" },
          { kind: "answer", text: "Implemented." },
        ],
        verifier: [bad, { kind: "answer", text: "Verified." }],
      },
      { maxAttempts: 1 },
    );
    // Asked once more, told what was wrong (a second conversation from its first turn), then the attempt failed.
    expect(fake.turnsOf("verifier").filter((request) => request.turn === 0)).toHaveLength(2);
    expect(of(journal, "stage.finished").filter((event) => event.stage === "verifier")).toEqual([
      expect.objectContaining({ failureClass: "artifact-invalid", detail: expect.stringContaining("verdict.json") }),
    ]);
    const blocked = of(journal, "story.blocked")[0];
    expect(blocked).toMatchObject({ failureClass: "retry-ceiling", detail: expect.stringContaining("failed at verifier (artifact-invalid)") });
    expect(run.exitCode).toBe(1);
  }, 600_000);

  it("a provider that never answers ends at the seat's configured timeout as agent-timeout", async () => {
    const { run, fake, journal } = await story({ implementer: [{ kind: "hang" }] }, { timeoutMinutes: 0.75, maxAttempts: 1 });
    // The guard: the hanging request was received, so it is the hang the timeout ended, not a CLI slow to start.
    expect(fake.turnsOf("implementer").map((request) => request.answered)).toEqual(["hang"]);
    expect(of(journal, "stage.finished").filter((event) => event.stage === "implementer")).toEqual([
      expect.objectContaining({ failureClass: "agent-timeout", detail: expect.stringContaining("stopped at its timeout (45000 ms)") }),
    ]);
    expect(of(journal, "story.blocked")[0]).toMatchObject({ detail: expect.stringContaining("(agent-timeout)") });
    expect(fake.turnsOf("tester")).toEqual([]);
    expect(run.exitCode).toBe(1);
  }, 600_000);
});
