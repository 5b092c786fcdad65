/**
 * The presets and the unavailable-agent messages against the real CLIs, installed from npm at
 * pinned versions (test/agents/real-cli-install.ts): the flags the presets pass are the CLIs'
 * own, and each way an agent cannot work (no credentials, a refused key, a rate limit, no
 * provider, no network, root) is recognised from what the installed CLI prints. No model is
 * reached: the provider is a loopback server answering errors, or nothing at all.
 */
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { classifySeatEnd, planSeatCommand, runSeat, type AgentPreset, type SeatResult } from "../../src/agents/index.js";
import { exec } from "../../src/exec/index.js";
import { endpointsOf, findNetTools, Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { startFakeProvider } from "../support/fake-provider/index.js";
import { freePort } from "../support/net.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { prependPath } from "./fake-cli.js";
import { CLAUDE_CODE_VERSION, CODEX_VERSION, installRealClis, type InstalledClis } from "./real-cli-install.js";

let clis: InstalledClis;
let restorePath: () => void;
let sandbox: Sandbox;
const NOW = new Date();

beforeAll(async () => {
  clis = await installRealClis();
  restorePath = prependPath(clis.bin);
  // Granted the way an operator grants an installed tool's folder (HARNESS_SANDBOX_READ).
  sandbox = new Sandbox({ ...sandboxSettingsFromEnv({}), readPaths: [clis.root] });
}, 600_000);

afterAll(() => {
  restorePath?.();
  removeTempDirs();
});

/** A worktree, prompt and artifact folder for one seat. */
function seat(prompt = "Say hello.\n"): { worktree: string; promptFile: string; artifactDir: string; logPath: string } {
  const dir = makeTempDir("harness-real-cli-");
  const worktree = makeTempDir("harness-real-cli-wt-");
  const promptFile = join(dir, "prompt.md");
  writeFileSync(promptFile, prompt);
  return { worktree, promptFile, artifactDir: dir, logPath: join(dir, "agent.log") };
}

/** Runs `preset` in a sandboxed seat with these environment values (set for this test process only while it runs). */
async function runPreset(preset: AgentPreset, env: Record<string, string> = {}, box: Sandbox = sandbox, prompt?: string): Promise<SeatResult> {
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    return await runSeat({
      ...seat(prompt),
      launch: { preset },
      stage: "implementer",
      attempt: 1,
      timeoutMs: 120_000,
      envAllow: Object.keys(env),
      sandbox: box,
      watchIntervalMs: 200,
    });
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** A loopback "provider" answering every request with `status` and an Anthropic-shaped error. */
async function provider(status: number, type: string): Promise<{ url: string; server: Server; requests: () => number }> {
  let requests = 0;
  const server = createServer((request, response) => {
    requests += 1;
    request.resume();
    response.writeHead(status, { "content-type": "application/json", ...(status === 429 ? { "retry-after": "30" } : {}) });
    response.end(JSON.stringify({ type: "error", error: { type, message: "fake provider says no" } }));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { url: `http://127.0.0.1:${address.port}`, server, requests: () => requests };
}

/**
 * A seat's sandbox that may reach the host's loopback `port` (as an operator opens a provider
 * gateway with HARNESS_NET_ALLOW), and the provider's URL as seen from the step's own network.
 */
function openedTo(port: number): { box: Sandbox; url: string } {
  const tools = findNetTools(process.env.PATH ?? "");
  if ("missing" in tools) throw new Error(`a networked step needs ${tools.missing.join(", ")}`);
  const box = new Sandbox({ ...sandboxSettingsFromEnv({ HARNESS_NET_ALLOW: `127.0.0.1:${port}` }), readPaths: [clis.root] });
  return { box, url: `http://${endpointsOf(tools.kind).hostLoopback}:${port}` };
}

/** The options (and their values) a preset passes, as `--help` would list them. */
function presetOptions(preset: AgentPreset): string[] {
  const planned = planSeatCommand({ preset }, { promptFile: "/p", artifactDir: "/a", worktree: "/w" });
  if (planned.kind !== "argv") throw new Error("a preset is an argv");
  // A `-c` value is a key of Codex's configuration, not an option: the story test proves those take effect.
  return planned.argv.slice(1).filter((arg, index, all) => arg !== "-" && !arg.startsWith("/") && arg !== "exec" && all[index - 1] !== "-c");
}

describe(`the real CLIs (Claude Code ${CLAUDE_CODE_VERSION}, Codex ${CODEX_VERSION})`, () => {
  it.each([
    ["claude-code", ["claude", "--help"]],
    ["codex", ["codex", "exec", "--help"]],
  ] as const)("every option and value the %s preset passes is in the installed CLI's --help", async (preset, argv) => {
    const help = await exec([join(clis.bin, argv[0]), ...argv.slice(1)], {
      cwd: clis.root,
      captureStdout: true,
      timeoutMs: 60_000,
      env: { set: { HOME: makeTempDir() } },
    });
    expect(help.exitCode).toBe(0);
    const text = help.stdout?.toString() ?? "";
    const options = presetOptions(preset);
    expect(options.length).toBeGreaterThan(2);
    for (const option of options) expect({ option, listed: text.includes(option) }).toEqual({ option, listed: true });
  });

  it("Claude Code without credentials is auth-missing, and sandboxed it does not run as root even when the App does", async () => {
    const result = await runPreset("claude-code");
    expect(result).toMatchObject({ sandboxed: true, exitCode: 1 });
    expect(classifySeatEnd(result, NOW)).toMatchObject({ reason: "auth-missing", message: expect.stringContaining("Not logged in") });
  }, 180_000);

  it.each([
    [401, "authentication_error", "auth-missing", "Failed to authenticate"],
    [429, "rate_limit_error", "rate-limited", "(429)"],
  ] as const)(
    "Claude Code answered %i (%s) by its provider is %s",
    async (status, type, reason, words) => {
      const fake = await provider(status, type);
      try {
        const opened = openedTo(Number(new URL(fake.url).port));
        const result = await runPreset(
          "claude-code",
          { ANTHROPIC_API_KEY: "sk-ant-test-not-a-key", ANTHROPIC_BASE_URL: opened.url, CLAUDE_CODE_MAX_RETRIES: "0" },
          opened.box,
        );
        expect(fake.requests()).toBeGreaterThan(0);
        expect(classifySeatEnd(result, NOW)).toMatchObject({ reason, message: expect.stringContaining(words) });
      } finally {
        fake.server.close();
      }
    },
    180_000,
  );

  it("Claude Code whose provider answers 500 after its retries is provider-unreachable, not a failed attempt", async () => {
    const fake = await provider(500, "api_error");
    try {
      const opened = openedTo(Number(new URL(fake.url).port));
      const result = await runPreset(
        "claude-code",
        { ANTHROPIC_API_KEY: "sk-ant-test-not-a-key", ANTHROPIC_BASE_URL: opened.url, CLAUDE_CODE_MAX_RETRIES: "1" },
        opened.box,
      );
      expect(fake.requests()).toBeGreaterThanOrEqual(2);
      expect(classifySeatEnd(result, NOW)).toMatchObject({ reason: "provider-unreachable", message: expect.stringContaining("API Error: 500") });
    } finally {
      fake.server.close();
    }
  }, 180_000);

  it.each([
    { status: 500, errorType: "server_error", turns: 2, words: "high demand" },
    { status: 529, errorType: "overloaded_error", turns: 1, words: "unexpected status 529" },
  ])(
    "Codex whose provider answers $status ($errorType) after its retries is provider-unreachable, not a failed attempt",
    async ({ status, errorType, turns, words }) => {
      const fake = await startFakeProvider({ script: { implementer: [{ kind: "status", status, errorType }] } });
      try {
        const opened = openedTo(fake.port);
        const result = await runPreset(
          "codex",
          { OPENAI_API_KEY: "sk-test-not-a-key", OPENAI_BASE_URL: `${opened.url}/v1` },
          opened.box,
          "You are the implementer.\n",
        );
        expect(fake.turnsOf("implementer").length).toBeGreaterThanOrEqual(turns);
        expect(classifySeatEnd(result, NOW)).toMatchObject({ reason: "provider-unreachable", message: expect.stringContaining(words) });
      } finally {
        await fake.stop();
      }
    },
    180_000,
  );

  it("Claude Code whose provider refuses the connection is provider-unreachable", async () => {
    const port = await freePort();
    const result = await runPreset("claude-code", {
      ANTHROPIC_API_KEY: "sk-ant-test-not-a-key",
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
      CLAUDE_CODE_MAX_RETRIES: "0",
    });
    expect(classifySeatEnd(result, NOW)).toMatchObject({ reason: "provider-unreachable", message: expect.stringContaining("ECONNREFUSED") });
  }, 180_000);

  it("Claude Code with no network at all is provider-unreachable", async () => {
    const box = seat();
    const env = { allow: [], set: { ANTHROPIC_API_KEY: "sk-ant-test-not-a-key", CLAUDE_CODE_MAX_RETRIES: "0" } };
    const result = await sandbox.run(
      ["claude", ...presetOptions("claude-code")],
      { cwd: box.worktree, env, input: "Say hello.\n", timeoutMs: 150_000, logPath: box.logPath },
      { purpose: "agent", network: false, writable: [box.worktree] },
    );
    expect(result.network).toBe(false);
    expect(classifySeatEnd(result, NOW)).toMatchObject({ reason: "provider-unreachable" });
  }, 180_000);

  it("Claude Code run as root (an App running unsandboxed as root) is root-refused", async () => {
    // uid 0 in a user namespace is root to the CLI, whoever runs the test.
    const home = makeTempDir();
    const argv = [
      "bwrap",
      "--unshare-user",
      "--uid",
      "0",
      "--gid",
      "0",
      "--ro-bind",
      "/",
      "/",
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--bind",
      home,
      home,
      "--",
      "claude",
      ...presetOptions("claude-code"),
    ];
    // The root file system is read-only in here: the CLI's temp folder must be writable, or it
    // stops on EROFS (mkdir /tmp/claude-0) before it looks at the uid, on a machine where no
    // earlier run left that folder behind.
    const result = await exec(argv, {
      cwd: home,
      env: { set: { HOME: home, TMPDIR: home } },
      input: "Say hello.\n",
      timeoutMs: 200_000,
      logPath: join(home, "log"),
    });
    expect({ timedOut: result.timedOut, end: classifySeatEnd(result, NOW) }).toMatchObject({ timedOut: false, end: { reason: "root-refused" } });
  });

  it("Codex without a network waits in a loop; the seat stops it and it is provider-unreachable", async () => {
    const result = await runPreset("codex", { OPENAI_API_KEY: "sk-test-not-a-key" });
    expect(result.stoppedWaiting).toBe(true);
    expect(result.timedOut).toBe(false);
    expect(classifySeatEnd(result, NOW)).toMatchObject({ reason: "provider-unreachable", message: expect.stringContaining("Reconnecting") });
  }, 180_000);
});
