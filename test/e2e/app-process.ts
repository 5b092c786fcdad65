/**
 * Runs the App as a real HTTP server for end-to-end tests: `node bin/harness.js serve` in its
 * own process (through src/exec), configured like an operator would — credentials in `.env`,
 * GHE_HOST/GHE_PROTOCOL pointing at the fake GitHub, PORT and HARNESS_HOME in its environment.
 */
import { writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exec, type ExecResult } from "../../src/exec/index.js";
import type { FakeGitHub } from "../support/fake-github/index.js";
import { freePort } from "../support/net.js";
import { eventually } from "../support/poll.js";
export { freePort };

const BIN = fileURLToPath(new URL("../../bin/harness.js", import.meta.url));

export interface RunningApp {
  port: number;
  webhookUrl: string;
  logPath: string;
  pid: number;
  done: Promise<ExecResult>;
  /** The App's log so far (JSON lines). */
  log(): Promise<string>;
  /** Ends the App with SIGTERM (its process group) and waits for it. */
  stop(): Promise<ExecResult>;
  /** Sends the App's own process SIGINT (Ctrl-C of `npm start`) and waits for it; SIGTERM to its group after a hang guard. */
  interrupt(): Promise<ExecResult>;
  /** Ends the App's own process with SIGKILL: no shutdown code runs. */
  kill9(): Promise<ExecResult>;
}

/** Starts the App against `fake` with data under `home`; resolves once it answers /ping. */
export async function startApp(args: {
  fake: FakeGitHub;
  home: string;
  workDir: string;
  env?: Record<string, string>;
  dotenv?: Record<string, string>;
}): Promise<RunningApp> {
  const { fake } = args;
  // Credentials go in .env, as Probot's setup writes them; src/exec never passes them to a child.
  const pem = Buffer.from(fake.privateKey).toString("base64");
  // Other secrets of the App (HARNESS_STATUS_TOKEN) go there too: src/exec would drop them from the environment.
  const extra = Object.entries(args.dotenv ?? {})
    .map(([name, value]) => `${name}=${value}\n`)
    .join("");
  writeFileSync(join(args.workDir, ".env"), `APP_ID=${fake.appId}\nPRIVATE_KEY=${pem}\nWEBHOOK_SECRET=${fake.webhookSecret}\n${extra}`);
  const port = await freePort();
  const logPath = join(args.workDir, `app-${port}.log`);
  const abort = new AbortController();
  let pid = 0;
  const done = exec([process.execPath, BIN, "serve"], {
    cwd: args.workDir,
    env: {
      set: {
        GHE_HOST: fake.host,
        GHE_PROTOCOL: "http",
        HOST: "127.0.0.1",
        PORT: String(port),
        HARNESS_HOME: args.home,
        LOG_FORMAT: "json",
        LOG_LEVEL: "info",
        // The fake has no secondary rate limits; GitHub.com's one-write-a-second etiquette would only slow the tests.
        HARNESS_GITHUB_THROTTLE: "off",
        ...args.env,
      },
    },
    logPath,
    signal: abort.signal,
    // A hang guard: stop() sends SIGTERM and SIGKILLs only after this, generous for a loaded machine.
    killGraceMs: 60_000,
    onSpawn: (childPid) => {
      pid = childPid;
    },
  });
  const url = `http://127.0.0.1:${port}`;
  let exited: ExecResult | undefined;
  void done.then((result) => {
    exited = result;
  });
  // A hang guard, generous for a loaded machine: the App is polled until it answers.
  await eventually(
    "the App to answer",
    async () => {
      if (exited) throw new Error(`the App exited before answering (exit ${exited.exitCode}):\n${exited.tail}`);
      return (await fetch(`${url}/ping`).then(
        (response) => response.ok,
        () => false,
      ))
        ? true
        : undefined;
    },
    120_000,
  ).catch(async (error: unknown) => {
    abort.abort();
    throw exited ? error : new Error(`${String(error)}:\n${await readFile(logPath, "utf8").catch(() => "")}`);
  });
  return {
    port,
    webhookUrl: `${url}/api/github/webhooks`,
    logPath,
    pid,
    done,
    log: () => readFile(logPath, "utf8").catch(() => ""),
    stop: async () => {
      abort.abort();
      return done;
    },
    interrupt: async () => {
      process.kill(pid, "SIGINT");
      const guard = setTimeout(() => abort.abort(), 60_000);
      try {
        return await done;
      } finally {
        clearTimeout(guard);
      }
    },
    kill9: async () => {
      process.kill(pid, "SIGKILL");
      return done;
    },
  };
}
