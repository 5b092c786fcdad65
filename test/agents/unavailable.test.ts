import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { classifyAgentOutput, dispatchSeat, parseResetTime, type DispatchHooks } from "../../src/agents/index.js";
import { Sandbox, sandboxSettingsFromEnv, sandboxFromEnv } from "../../src/sandbox/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { dirname } from "node:path";
import { AGENT_SCRIPT } from "../pipeline/helpers.js";
import { fakeAgentBin, prependPath } from "./fake-cli.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const operatorSandbox = sandboxFromEnv();

afterAll(removeTempDirs);

const NOW = new Date("2026-12-01T14:10:00Z");

describe("classifyAgentOutput: the real CLIs' messages", () => {
  it.each([
    ["--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons", "root-refused"],
    ["Not logged in · Please run /login", "auth-missing"],
    ["API Error: Unable to connect to API (ConnectionRefused)", "provider-unreachable"],
    ["ERROR: Reconnecting... waiting for network", "provider-unreachable"],
    ["You've hit your limit · resets 3pm (UTC)", "rate-limited"],
    ["ERROR: You've hit your usage limit. Try again at 3:05 PM.", "rate-limited"],
    ["unexpected status 401 Unauthorized: Missing bearer or basic authentication in header", "auth-missing"],
    // Claude Code 2.1.332, as test/agents/real-cli.test.ts sees it print them.
    ["Failed to authenticate. API Error: 401 fake provider says no", "auth-missing"],
    ["API Error: Request rejected (429) · fake provider says no", "rate-limited"],
    ["API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)", "provider-unreachable"],
    ["API Error: Can't reach the API server — check your internet or DNS (EAI_AGAIN)", "provider-unreachable"],
    [
      "API Error: API returned an empty or malformed response (HTTP 200) — check for a proxy or gateway intercepting the request. Response: content-type event-stream, body is unrecognized text, 27 bytes",
      "provider-unreachable",
    ],
    ["stream disconnected before completion: stream closed before response.completed", "provider-unreachable"],
    // A provider's 5xx after the CLI's retries (Claude Code 2.1.332, Codex 0.171.0 against the fake provider).
    ["API Error: 500 fake provider: 500. This is a server-side issue, usually temporary — try again in a moment.", "provider-unreachable"],
    ["ERROR: We’re currently experiencing high demand, which may cause temporary errors.", "provider-unreachable"],
    ["unexpected status 529 <unknown status code>: fake provider: 529, url: http://10.0.2.2:41503/v1/responses", "provider-unreachable"],
    // A CLI that cannot start where it runs: Claude Code without its postinstall, a program or interpreter the sandbox does not show.
    ["Error: claude native binary not installed.", "not-installed"],
    ["bwrap: execvp claude: No such file or directory", "not-installed"],
    ["/usr/bin/env: 'node': No such file or directory", "not-installed"],
  ])("%s → %s", (line, reason) => {
    expect(classifyAgentOutput(`some earlier output\n\u001b[31m${line}\u001b[0m\n`, NOW)).toMatchObject({ reason, message: line });
  });

  it("leaves ordinary failures to the change", () => {
    expect(classifyAgentOutput("Error: tests failed\n3 failing\n", NOW)).toBeUndefined();
    expect(classifyAgentOutput("", NOW)).toBeUndefined();
    // A 500 of the repository's own server in a test's output is not the provider's.
    expect(classifyAgentOutput("GET /api/users 500 Internal Server Error\nError: expected 200, got 500\n", NOW)).toBeUndefined();
    // A test's own missing file is the change's, not a CLI that cannot start.
    expect(classifyAgentOutput("cat: fixtures/data.json: No such file or directory\n", NOW)).toBeUndefined();
  });

  it("reads the reset time each CLI prints", () => {
    expect(parseResetTime("You've hit your limit · resets 3pm (UTC)", NOW)?.toISOString()).toBe("2026-12-01T15:00:00.000Z");
    expect(parseResetTime("You've hit your limit · resets 2pm (UTC)", NOW)?.toISOString()).toBe("2026-12-02T14:00:00.000Z");
    expect(parseResetTime("You've hit your usage limit · resets 4:30pm (Europe/Berlin)", NOW)?.toISOString()).toBe("2026-12-01T15:30:00.000Z");
    expect(parseResetTime("You've hit your weekly limit · resets Dec 3, 9am (UTC)", NOW)?.toISOString()).toBe("2026-12-03T09:00:00.000Z");
    expect(parseResetTime("You've hit your fast limit · resets in 2h 5m", NOW)?.toISOString()).toBe("2026-12-01T16:15:00.000Z");
    const local = parseResetTime("Try again at 3:05 PM.", NOW);
    expect(local?.getHours()).toBe(15);
    expect(local?.getMinutes()).toBe(5);
    expect(local && local.getTime() > NOW.getTime()).toBe(true);
    expect(parseResetTime("You've hit your limit", NOW)).toBeUndefined();
  });
});

/** A seat's folders and a clock that only the fake sleeper moves. */
function seatSetup(): { request: Parameters<typeof dispatchSeat>[0]; hooks: DispatchHooks & { parkedUntil: string[]; clock: { now: Date } } } {
  const dir = makeTempDir("harness-dispatch-");
  const worktree = join(dir, "worktree");
  const artifactDir = join(dir, "artifacts");
  mkdirSync(worktree);
  mkdirSync(artifactDir);
  writeFileSync(join(dir, "prompt.md"), "implement it\n");
  const clock = { now: NOW };
  const parkedUntil: string[] = [];
  return {
    request: {
      sandbox: operatorSandbox,
      stage: "implementer",
      attempt: 1,
      worktree,
      promptFile: join(dir, "prompt.md"),
      artifactDir,
      logPath: join(dir, "agent.log"),
      timeoutMs: 600_000,
      envAllow: [],
    },
    hooks: {
      clock,
      parkedUntil,
      now: () => clock.now,
      sleepUntil: async (at) => {
        parkedUntil.push(at.toISOString());
        clock.now = at;
      },
    },
  };
}

/** The sandbox the seat runs in: it may read the fake CLIs and the scripted agent, and write their logs. */
function sandboxFor(binDir: string, worktree: string): Sandbox {
  return new Sandbox(
    sandboxSettingsFromEnv({ ...process.env, HARNESS_SANDBOX_READ: dirname(AGENT_SCRIPT), HARNESS_SANDBOX_WRITE: `${binDir}:${dirname(worktree)}` }),
  );
}

describe("dispatchSeat with the fake CLIs", () => {
  let restore: () => void = () => undefined;
  afterEach(() => restore());

  it("falls back to the next binding when the first refuses to run as root", async () => {
    const { request, hooks } = seatSetup();
    const bin = fakeAgentBin({ claude: ["root"], codex: [`work ${AGENT_SCRIPT} ${join(request.worktree, "..", "launches.log")}`] });
    restore = prependPath(bin.dir);
    request.sandbox = sandboxFor(bin.dir, request.worktree);
    const result = await dispatchSeat(request, [{ preset: "claude-code" }, { preset: "codex" }], hooks);
    expect(result).toMatchObject({ kind: "ran", launch: { preset: "codex" }, result: { exitCode: 0 } });
    expect(result.unavailable).toEqual([
      expect.objectContaining({ launch: { preset: "claude-code" }, unavailable: expect.objectContaining({ reason: "root-refused" }) }),
    ]);
    expect(bin.calls()).toEqual(["claude root", "codex work"]);
  });

  it("parks a rate-limited seat until the reset the CLI names, then wakes it", async () => {
    const { request, hooks } = seatSetup();
    const bin = fakeAgentBin({ claude: ["limit", `work ${AGENT_SCRIPT} ${join(request.worktree, "..", "launches.log")}`] });
    restore = prependPath(bin.dir);
    request.sandbox = sandboxFor(bin.dir, request.worktree);
    const result = await dispatchSeat(request, [{ preset: "claude-code" }], hooks);
    expect(result.kind).toBe("ran");
    expect(hooks.parkedUntil).toEqual(["2026-12-01T15:00:00.000Z"]);
    expect(bin.calls()).toEqual(["claude limit", "claude work"]);
  });

  it("reports unavailable when every binding is, and none names a reset", async () => {
    const { request, hooks } = seatSetup();
    const bin = fakeAgentBin({ claude: ["no-login"], codex: ["codex-no-network"] });
    restore = prependPath(bin.dir);
    request.sandbox = sandboxFor(bin.dir, request.worktree);
    const result = await dispatchSeat(request, [{ preset: "claude-code" }, { preset: "codex" }], hooks);
    expect(result.kind).toBe("unavailable");
    expect(result.unavailable.map((binding) => binding.unavailable.reason)).toEqual(["auth-missing", "provider-unreachable"]);
    // Codex's network loop was stopped when it showed, long before the seat's ten-minute timeout.
    expect(hooks.parkedUntil).toEqual([]);
  });
});
