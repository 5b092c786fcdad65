/**
 * One whole story with a real agent CLI: `harness run` (the compiled command a user runs) on a
 * fresh repository, the CLI talking to the fake model provider on loopback, `HARNESS_HOME` in
 * this checkout's cache folder (not under the OS temporary folder, which the sandbox hides from
 * steps, as a deployment's data directory is not there either).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { exec } from "../../src/exec/index.js";
import { endpointsOf, findNetTools } from "../../src/sandbox/index.js";
import { git } from "../../src/workspace/index.js";
import type { FakeProvider } from "../support/fake-provider/index.js";
import { initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";
import { installRealClis, type InstalledClis } from "./real-cli-install.js";

/** The folder under which each story's HARNESS_HOME is made (this checkout's cache). */
export const STORY_HOMES = resolve("node_modules", ".cache", "harness-real-story");

export interface StoryRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  repo: string;
  home: string;
  /** The run directory `harness run` printed. */
  runDir: string;
}

/** The provider's URL as a networked step sees it (the host's loopback through the namespace), and the HARNESS_NET_ALLOW that opens it. */
export function providerAsSeenByStep(provider: FakeProvider): { url: string; netAllow: string } {
  const tools = findNetTools(process.env.PATH ?? "");
  if ("missing" in tools) throw new Error(`a networked step needs ${tools.missing.join(", ")}: apt-get install -y slirp4netns iproute2 (or passt)`);
  return { url: `http://${endpointsOf(tools.kind).hostLoopback}:${provider.port}`, netAllow: `127.0.0.1:${provider.port}` };
}

/** What a story may change of its configuration: the seats' timeout (default 3 minutes) and the attempts (the workflow's by default). */
export interface StoryOptions {
  timeoutMinutes?: number;
  maxAttempts?: number;
}

/**
 * Runs a story whose agent is `preset`, with `agentEnv` passed to the agent (named in
 * `agent.env` and set in the command's environment), and the test command `test`.
 */
export async function runRealStory(
  clis: InstalledClis,
  preset: "claude-code" | "codex",
  agentEnv: Record<string, string>,
  netAllow: string,
  test: string,
  options: StoryOptions = {},
): Promise<StoryRun> {
  const dir = makeTempDir("harness-real-story-");
  const repo = join(dir, "repo");
  const yaml = [
    "agent:",
    `  preset: ${preset}`,
    `  env: [${Object.keys(agentEnv).join(", ")}]`,
    `  timeout_minutes: ${options.timeoutMinutes ?? 3}`,
    "test:",
    `  command: ${JSON.stringify(test)}`,
    "provision:",
    '  command: "true"',
    ...(options.maxAttempts !== undefined ? [`max_attempts: ${options.maxAttempts}`] : []),
  ].join("\n");
  await initRepo(repo, { "README.md": "# demo\n", ".github/harness.yml": `${yaml}\n` });
  const story = join(dir, "Greet.md");
  writeFileSync(story, "# Greet\n\nWrite feature.txt saying hello.\n");
  mkdirSync(STORY_HOMES, { recursive: true });
  const home = mkdtempSync(join(STORY_HOMES, "home-"));
  const result = await exec([process.execPath, resolve("bin/harness.js"), "run", repo, "--story", story], {
    cwd: repo,
    captureStdout: true,
    timeoutMs: 600_000,
    logPath: join(dir, "harness.log"),
    env: {
      allow: ["PATH"],
      set: {
        ...agentEnv,
        PATH: `${clis.bin}:${process.env.PATH ?? ""}`,
        HARNESS_HOME: home,
        // Granted the way an operator grants an installed CLI's folder, and opens a provider on loopback.
        HARNESS_SANDBOX_READ: clis.root,
        HARNESS_NET_ALLOW: netAllow,
      },
    },
  });
  const stdout = result.stdout?.toString("utf8") ?? "";
  const log = readFileSync(join(dir, "harness.log"), "utf8");
  const runDir = /^run directory: (.+)$/m.exec(`${stdout}\n${log}`)?.[1] ?? "";
  return { exitCode: result.exitCode, stdout, stderr: log, repo, home, runDir };
}

/** The files of a commit, and one file's content there. */
export async function commitFiles(repo: string, ref: string): Promise<string[]> {
  return (await git(["ls-tree", "-r", "--name-only", ref], { cwd: repo, readOnly: true })).split("\n").filter((line) => line !== "");
}

/** Every file named `name` under `dir`, recursively. */
export function findFiles(dir: string, name: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((path) => path === name || path.endsWith(`/${name}`))
    .map((path) => join(dir, path));
}

/** Removes the story homes made by this process. */
export function removeStoryHomes(homes: readonly string[]): void {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
}

/**
 * A test file's real-story setup: the real CLIs installed once before its cases, and the fake
 * providers and story homes its cases register stopped and removed after them.
 */
export function useRealStories(): { clis: () => InstalledClis; homes: string[]; providers: FakeProvider[] } {
  let installed: InstalledClis | undefined;
  const homes: string[] = [];
  const providers: FakeProvider[] = [];
  beforeAll(async () => {
    installed = await installRealClis();
  }, 600_000);
  afterAll(async () => {
    for (const provider of providers) await provider.stop();
    removeStoryHomes(homes);
    removeTempDirs();
  });
  const clis = (): InstalledClis => {
    if (!installed) throw new Error("the real CLIs are installed in beforeAll; use them inside a test");
    return installed;
  };
  return { clis, homes, providers };
}
