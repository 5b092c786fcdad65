/**
 * `harness worker` processes for the scale-out end-to-end tests, started like an operator would
 * (credentials in `.env` of the working folder, which `startApp` writes), each with its own
 * HARNESS_HOME; resolves once the worker says it is taking stories.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { exec, type ExecResult } from "../../src/exec/index.js";
import type { FakeGitHub } from "../support/fake-github/index.js";
import { eventually } from "../support/poll.js";

const BIN = resolve("bin/harness.js");

export interface RunningWorker {
  name: string;
  home: string;
  pid: number;
  done: Promise<ExecResult>;
  log(): Promise<string>;
  /** The JSON lines of its log whose message is `msg`. */
  entries(msg: string): Promise<Array<Record<string, unknown>>>;
  stop(): Promise<ExecResult>;
  kill9(): Promise<ExecResult>;
}

/** `nodeArgs` go before the program (the scale-out bench preloads its tracer with them). */
export async function startWorker(args: {
  fake: FakeGitHub;
  name: string;
  home: string;
  workDir: string;
  env: Record<string, string>;
  nodeArgs?: string[];
}): Promise<RunningWorker> {
  const logPath = join(args.workDir, `worker-${args.name}.log`);
  const abort = new AbortController();
  let pid = 0;
  let exited: ExecResult | undefined;
  const done = exec([process.execPath, ...(args.nodeArgs ?? []), BIN, "worker"], {
    cwd: args.workDir,
    env: {
      set: {
        GHE_HOST: args.fake.host,
        GHE_PROTOCOL: "http",
        HARNESS_HOME: args.home,
        LOG_FORMAT: "json",
        LOG_LEVEL: "info",
        HARNESS_GITHUB_THROTTLE: "off",
        ...args.env,
      },
    },
    logPath,
    signal: abort.signal,
    killGraceMs: 5000,
    onSpawn: (childPid) => {
      pid = childPid;
    },
  });
  void done.then((result) => {
    exited = result;
  });
  const log = (): Promise<string> => readFile(logPath, "utf8").catch(() => "");
  const entries = async (msg: string): Promise<Array<Record<string, unknown>>> =>
    (await log())
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === msg);
  // A hang guard, generous for a loaded machine: the worker is polled for its line.
  await eventually(
    `worker ${args.name} to take stories`,
    async () => {
      if (exited) throw new Error(`worker ${args.name} exited before taking stories (exit ${exited.exitCode}):\n${exited.tail}`);
      return (await entries("harness worker: taking stories")).length > 0 ? true : undefined;
    },
    180_000,
  ).catch(async (error: unknown) => {
    abort.abort();
    throw exited ? error : new Error(`${String(error)}:\n${await log()}`);
  });
  return {
    name: args.name,
    home: args.home,
    pid,
    done,
    log,
    entries,
    stop: async () => {
      abort.abort();
      return done;
    },
    kill9: async () => {
      process.kill(pid, "SIGKILL");
      return done;
    },
  };
}

/**
 * Tears a scale-out scenario down: releases any agent still waiting on its marker (one orphaned
 * by a killed worker included), stops the processes newest first, then the fake GitHub and Redis,
 * and removes the scenario's folder.
 */
export async function tearDown(scenario: {
  root: string | undefined;
  processes: Array<{ stop: () => Promise<unknown> }>;
  fake: { close: () => Promise<unknown>; assertNoUnexpectedRequests: () => void } | undefined;
  redis: { stop: () => Promise<unknown> } | undefined;
}): Promise<void> {
  if (scenario.root && existsSync(join(scenario.root, "markers"))) writeFileSync(join(scenario.root, "markers", "release"), "");
  for (const running of scenario.processes.splice(0).reverse()) await running.stop();
  try {
    // Every process that talked to the fake has stopped: it refused nothing.
    scenario.fake?.assertNoUnexpectedRequests();
  } finally {
    await scenario.fake?.close();
  }
  await scenario.redis?.stop();
  if (scenario.root) rmSync(scenario.root, { recursive: true, force: true });
}
