/** `harness serve` as an operator meets it: the setup page without credentials, clear errors for bad settings. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { exec } from "../../src/exec/index.js";
import { freePort } from "./app-process.js";
import { listenBacklogOf } from "../support/net.js";
import { eventually } from "../support/poll.js";

const BIN = resolve("bin/harness.js");

describe("harness serve", () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "harness-serve-"));
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it("shows Probot's setup page when APP_ID is missing", async () => {
    const port = await freePort();
    const abort = new AbortController();
    const done = exec([process.execPath, BIN, "serve"], {
      cwd: root,
      env: { set: { PORT: String(port), HOST: "127.0.0.1", HARNESS_HOME: join(root, "home"), HARNESS_LISTEN_BACKLOG: "7" } },
      signal: abort.signal,
      logPath: join(root, "setup.log"),
    });
    try {
      const page = await eventually("the setup page", async () => {
        const response = await fetch(`http://127.0.0.1:${port}/probot`).catch(() => undefined);
        return response?.ok ? response.text() : undefined;
      });
      expect(page).toContain("Register GitHub App");
      const root302 = await fetch(`http://127.0.0.1:${port}/`, { redirect: "manual" });
      expect(root302.status).toBe(302);
      expect(root302.headers.get("location")).toBe("/probot");
      // HARNESS_LISTEN_BACKLOG reaches Probot's own listen, setup page included.
      expect(await listenBacklogOf(port)).toBe(7);
    } finally {
      abort.abort();
      await done;
    }
  });

  it.each([
    ["HARNESS_CONCURRENCY", "many", /HARNESS_CONCURRENCY must be a positive integer/],
    ["HARNESS_AGENT_ENV", "ANTHROPIC_API_KEY,PRIVATE_KEY", /HARNESS_AGENT_ENV: 'PRIVATE_KEY' is one of the App's own credentials/],
    ["HARNESS_GITHUB_THROTTLE", "sometimes", /HARNESS_GITHUB_THROTTLE must be 'on' or 'off'/],
    ["HARNESS_LISTEN_BACKLOG", "lots", /HARNESS_LISTEN_BACKLOG must be a positive integer, got 'lots'/],
    ["HARNESS_MAX_INFLIGHT", "0", /HARNESS_MAX_INFLIGHT must be a positive integer, got '0'/],
  ])("exits 2 naming %s when it is invalid", async (name, value, message) => {
    const result = await exec([process.execPath, BIN, "serve"], {
      cwd: root,
      env: { set: { [name]: value, HARNESS_HOME: join(root, "home") } },
      timeoutMs: 30_000,
    });
    expect(result.exitCode).toBe(2);
    expect(result.tail).toMatch(message);
  });
});
