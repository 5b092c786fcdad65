/**
 * Before any seat runs, each preset CLI is started once inside the sandbox (`--version`): one
 * that cannot start there blocks the story as `agent-unavailable` in its own words (or
 * bubblewrap's), before a worktree is made; a fallback that starts lets the story run.
 */
import { symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseHarnessConfig } from "../../src/pipeline/index.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { makeTempDir, removeTempDirs, writeFiles } from "../support/tmp.js";
import { fakeAgentBin, prependPath } from "../agents/fake-cli.js";
import { AGENT_SCRIPT, launches, makeScenario, ofKind, runScenario, type Scenario } from "./helpers.js";

afterAll(removeTempDirs);

let restore: () => void = () => undefined;
afterEach(() => restore());

/** Claude Code's launcher when its postinstall did not run, word for word (2.1.332's bin/claude.exe). */
const NATIVE_MISSING = [
  "#!/bin/sh",
  'echo "Error: claude native binary not installed." >&2',
  'echo "" >&2',
  'echo "Either postinstall did not run (--ignore-scripts, some pnpm configs)" >&2',
  'echo "or the platform-native optional dependency was not downloaded" >&2',
  'echo "(--omit=optional)." >&2',
  "exit 1",
  "",
].join("\n");

/** The scenario's sandbox, granted the bin folder (HARNESS_SANDBOX_READ) and the fake CLIs' call log. */
function sandboxFor(s: Scenario, bin: string): Sandbox {
  return new Sandbox(
    sandboxSettingsFromEnv({ ...process.env, HARNESS_SANDBOX_READ: `${dirname(AGENT_SCRIPT)}:${bin}`, HARNESS_SANDBOX_WRITE: `${dirname(s.launches)}:${bin}` }),
  );
}

const presetConfig = (agent: string) =>
  parseHarnessConfig(`agent:\n${agent}\ntest:\n  command: test -f feature.txt\nprovision:\n  command: "true"\n`, "harness.yml");

describe("a preset CLI is started in the sandbox before any seat", () => {
  it("Claude Code without its native binary blocks the story as agent-unavailable, in the CLI's words, before a worktree", async () => {
    const s = await makeScenario();
    const bin = makeTempDir("harness-stub-bin-");
    writeFiles(bin, { claude: { content: NATIVE_MISSING, mode: 0o755 } });
    restore = prependPath(bin);
    const { outcome, journal } = await runScenario(s, presetConfig("  preset: claude-code"), { sandbox: sandboxFor(s, bin) });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "agent-unavailable" });
    expect(outcome.detail).toContain(
      "no agent of the implementer seat can start in the sandbox: 'claude --version' exited 1: Error: claude native binary not installed.",
    );
    expect(outcome.detail).toContain(join(outcome.runDir, "logs", "agent-start-claude-code", "version.log"));
    // Journaled as the story's one task's block, in the same words.
    const taskId = ofKind(journal, "run.started")[0]?.taskId;
    expect(taskId).toMatch(/^task-/);
    expect(ofKind(journal, "story.blocked")).toEqual([
      { kind: "story.blocked", taskId, failureClass: "agent-unavailable", detail: outcome.detail, at: expect.any(String) },
    ]);
    expect(ofKind(journal, "stage.started")).toEqual([]);
    expect(ofKind(journal, "task.started")).toEqual([]);
    expect(launches(s)).toEqual([]);
  });

  it("a planned story whose CLI cannot start is blocked as agent-unavailable without a task, before any task's worktree", async () => {
    const s = await makeScenario();
    const bin = makeTempDir("harness-stub-bin-");
    writeFiles(bin, { claude: { content: NATIVE_MISSING, mode: 0o755 } });
    restore = prependPath(bin);
    const plan = { tasks: [{ id: "a", title: "Part a", files: ["a.txt"] }] };
    const story = { id: "demo", title: "Plan", body: `One part.\n\n\`\`\`harness-plan\n${JSON.stringify(plan)}\n\`\`\`\n` };
    const { outcome, journal } = await runScenario(s, presetConfig("  preset: claude-code"), { sandbox: sandboxFor(s, bin), story });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "agent-unavailable" });
    expect(outcome.detail).toContain("'claude --version' exited 1: Error: claude native binary not installed.");
    expect(ofKind(journal, "story.blocked")).toEqual([
      { kind: "story.blocked", failureClass: "agent-unavailable", detail: outcome.detail, at: expect.any(String) },
    ]);
    expect(ofKind(journal, "worktree.created")).toEqual([]);
  });

  it("a CLI whose interpreter the sandbox does not show is agent-unavailable, naming the folder it cannot show and HARNESS_SANDBOX_READ", async () => {
    const s = await makeScenario();
    // The host runs it (its interpreter is a link in a folder of the OS temporary folder); a sandboxed step cannot see that folder.
    const hidden = makeTempDir("harness-hidden-interpreter-");
    symlinkSync("/bin/sh", join(hidden, "sh"));
    const bin = makeTempDir("harness-unseen-bin-");
    writeFiles(bin, { claude: { content: `#!${join(hidden, "sh")}\necho "claude 2.1.332"\n`, mode: 0o755 } });
    restore = prependPath(bin);
    const { outcome, journal } = await runScenario(s, presetConfig("  preset: claude-code"), { sandbox: sandboxFor(s, bin) });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "agent-unavailable" });
    // Refused before bubblewrap starts: the program's view names the interpreter's folder the sandbox never shows.
    expect(outcome.detail).toContain("'claude --version' could not start");
    expect(outcome.detail).toContain(`${hidden} is in the OS temporary folder, which steps never see`);
    expect(outcome.detail).toContain("HARNESS_SANDBOX_READ");
    expect(ofKind(journal, "stage.started")).toEqual([]);
  });

  it("a fallback that starts lets the story run; the seat falls back from the CLI without its binary (not-installed), no attempt failed", async () => {
    const s = await makeScenario();
    const fakes = fakeAgentBin({ codex: [`work ${AGENT_SCRIPT} ${s.launches}`] });
    writeFiles(fakes.dir, { claude: { content: NATIVE_MISSING, mode: 0o755 } });
    restore = prependPath(fakes.dir);
    const { outcome, journal } = await runScenario(s, presetConfig("  preset: claude-code\n  fallback: [codex]"), { sandbox: sandboxFor(s, fakes.dir) });
    expect(outcome.status).toBe("completed");
    expect(ofKind(journal, "seat.unavailable")[0]).toMatchObject({
      stage: "implementer",
      reason: "not-installed",
      message: "Error: claude native binary not installed.",
    });
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
    expect(fakes.calls().every((call) => call === "codex work")).toBe(true);
    expect(fakes.calls().length).toBeGreaterThanOrEqual(4);
  });
});
