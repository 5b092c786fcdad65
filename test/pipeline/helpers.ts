/**
 * Scenario helpers for pipeline tests: a tiny real repository, a configuration driving the
 * scripted agent, a reporter that records, and readers for what a run leaves behind.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  loadWorkflow,
  parseHarnessConfig,
  readJournal,
  runStory,
  type HarnessConfig,
  type HistoryEvent,
  type Reporter,
  type RunStoryArgs,
  type StoryOutcome,
  type Workflow,
} from "../../src/pipeline/index.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { initRepo, makeTempDir } from "../support/tmp.js";

export const AGENT_SCRIPT = fileURLToPath(new URL("../fixtures/agents/scripted.sh", import.meta.url));

/** Single-quotes a value for the shell (test-side twin of the harness's quoting). */
export const q = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

export interface Scenario {
  dir: string;
  repo: string;
  home: string;
  /** The scripted agent's launch log, in a folder of its own that the sandbox lets it write. */
  launches: string;
}

/** A fresh repository with one commit, and a HARNESS_HOME, under one temp dir. */
export async function makeScenario(files: Record<string, string> = {}): Promise<Scenario> {
  const dir = makeTempDir("harness-pipeline-");
  const repo = join(dir, "repo");
  await initRepo(repo, { "README.md": "# demo\n", ...files });
  mkdirSync(join(dir, "agent-out"));
  return { dir, repo, home: join(dir, "home"), launches: join(dir, "agent-out", "launches.log") };
}

/**
 * The operator settings a scenario's sandbox needs: the scripted agent lives outside the
 * worktree (in this repository's fixtures), and it logs its launches outside it, so the test
 * grants exactly those two folders the way an operator grants an agent CLI's folder
 * (HARNESS_SANDBOX_READ, HARNESS_SANDBOX_WRITE). Everything else is the real default sandbox.
 */
export function scenarioSandboxEnv(s: Scenario): Record<string, string> {
  return { HARNESS_SANDBOX_READ: dirname(AGENT_SCRIPT), HARNESS_SANDBOX_WRITE: dirname(s.launches) };
}

/** The sandbox of a scenario: the default one plus {@link scenarioSandboxEnv}. */
export function scenarioSandbox(s: Scenario): Sandbox {
  return new Sandbox(sandboxSettingsFromEnv({ ...process.env, ...scenarioSandboxEnv(s) }));
}

/** YAML configuration running the scripted agent in `scenario`; `extra` is appended verbatim. */
export function scriptedConfigYaml(s: Scenario, scenario: string, options: { test?: string; extra?: string } = {}): string {
  return [
    "agent:",
    `  command: ${JSON.stringify(`sh ${q(AGENT_SCRIPT)} ${scenario} ${q(s.launches)}`)}`,
    "test:",
    `  command: ${JSON.stringify(options.test ?? "test -f feature.txt")}`,
    "provision:",
    '  command: "true"',
    "max_attempts: 3",
    options.extra ?? "",
  ].join("\n");
}

export function scriptedConfig(s: Scenario, scenario: string, options: { test?: string; extra?: string } = {}): HarnessConfig {
  return parseHarnessConfig(scriptedConfigYaml(s, scenario, options), "harness.yml");
}

/** A reporter that keeps every event it is given. */
export function recordingReporter(): Reporter & { events: HistoryEvent[] } {
  const events: HistoryEvent[] = [];
  return { events, onEvent: async (event) => void events.push(event) };
}

/** Runs a story in the scenario with the default workflow unless told otherwise. */
export async function runScenario(
  s: Scenario,
  config: HarnessConfig,
  overrides: Partial<RunStoryArgs> & { workflow?: Workflow } = {},
): Promise<{ outcome: StoryOutcome; journal: HistoryEvent[]; reporter: ReturnType<typeof recordingReporter> }> {
  const reporter = recordingReporter();
  const outcome = await runStory({
    repoDir: s.repo,
    story: { id: "demo", title: "Greet the user", body: "Write feature.txt saying hello." },
    branch: "harness/story-demo",
    baseRef: "HEAD",
    config,
    workflow: loadWorkflow(),
    harnessHome: s.home,
    reporter,
    agentEnvAllow: [],
    sandbox: scenarioSandbox(s),
    ...overrides,
  });
  return { outcome, journal: readJournal(join(outcome.runDir, "execution-history.ndjson")), reporter };
}

/** The "<stage> <attempt>" lines the scripted agent logged. */
export function launches(s: Scenario): string[] {
  return existsSync(s.launches)
    ? readFileSync(s.launches, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];
}

/** The kinds of a journal, in order. */
export const kinds = (events: readonly HistoryEvent[]): string[] => events.map((event) => event.kind);

/** The events of one kind. */
export function ofKind<K extends HistoryEvent["kind"]>(events: readonly HistoryEvent[], kind: K): Extract<HistoryEvent, { kind: K }>[] {
  return events.filter((event): event is Extract<HistoryEvent, { kind: K }> => event.kind === kind);
}
