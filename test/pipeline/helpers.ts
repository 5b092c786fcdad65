/**
 * Scenario helpers for pipeline tests: a tiny real repository, a configuration driving the
 * scripted agent, a reporter that records, and readers for what a run leaves behind.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
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
import { initRepo, makeTempDir } from "../support/tmp.js";

export const AGENT_SCRIPT = fileURLToPath(new URL("../fixtures/agents/scripted.sh", import.meta.url));

/** Single-quotes a value for the shell (test-side twin of the harness's quoting). */
export const q = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

export interface Scenario {
  dir: string;
  repo: string;
  home: string;
  launches: string;
}

/** A fresh repository with one commit, and a HARNESS_HOME, under one temp dir. */
export async function makeScenario(files: Record<string, string> = {}): Promise<Scenario> {
  const dir = makeTempDir("harness-pipeline-");
  const repo = join(dir, "repo");
  await initRepo(repo, { "README.md": "# demo\n", ...files });
  return { dir, repo, home: join(dir, "home"), launches: join(dir, "launches.log") };
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
    ...overrides,
  });
  return { outcome, journal: readJournal(join(outcome.runDir, "execution-history.ndjson")), reporter };
}

/** The "<stage> <attempt>" lines the scripted agent logged. */
export function launches(s: Scenario): string[] {
  return existsSync(s.launches) ? readFileSync(s.launches, "utf8").split("\n").filter((line) => line !== "") : [];
}

/** The kinds of a journal, in order. */
export const kinds = (events: readonly HistoryEvent[]): string[] => events.map((event) => event.kind);

/** The events of one kind. */
export function ofKind<K extends HistoryEvent["kind"]>(events: readonly HistoryEvent[], kind: K): Extract<HistoryEvent, { kind: K }>[] {
  return events.filter((event): event is Extract<HistoryEvent, { kind: K }> => event.kind === kind);
}
