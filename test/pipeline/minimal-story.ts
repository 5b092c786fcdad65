/**
 * The smallest real story, for the coordinator's decisions (coordinator-paths, coordinator-start):
 * a one-commit repository, a workflow of one gate or one seat, agents and suites that are one
 * shell line.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  loadWorkflow,
  parseHarnessConfig,
  readJournal,
  runStory,
  type HarnessConfig,
  type HistoryEvent,
  type RunStoryArgs,
  type StoryOutcome,
  type Workflow,
} from "../../src/pipeline/index.js";
import { recordingReporter, type Scenario } from "./helpers.js";
import { sandboxOf } from "./task-run.js";

/** A workflow of `stages`, written to the scenario's folder and loaded as a user's would be. */
export function workflow(s: Scenario, name: string, stages: unknown[], retry: string, maxAttempts = 2): Workflow {
  const path = join(s.dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ name, max_attempts: maxAttempts, stages, on_failure: { retry_stage: retry } }));
  return loadWorkflow(path);
}

/** Agent, suite and provisioning of one shell line each; `provision: null` leaves provisioning out (the repository's rules then apply). */
export function minimalConfig(options: { agent?: string; test?: string; provision?: string | null; extra?: string }): HarnessConfig {
  const lines = [
    "agent:",
    `  command: ${JSON.stringify(options.agent ?? "true")}`,
    "test:",
    `  command: ${JSON.stringify(options.test ?? "true")}`,
    ...(options.provision === null ? [] : ["provision:", `  command: ${JSON.stringify(options.provision ?? "true")}`]),
    options.extra ?? "",
  ];
  return parseHarnessConfig(lines.join("\n"), "harness.yml");
}

/** Runs the story `demo` in the scenario, sandboxed, and reads its journal back. */
export async function runMinimal(
  s: Scenario,
  args: Partial<RunStoryArgs> & { config: HarnessConfig; workflow: Workflow },
): Promise<{ outcome: StoryOutcome; journal: HistoryEvent[] }> {
  const outcome = await runStory({
    repoDir: s.repo,
    story: { id: "demo", title: "Greet the user", body: "Write feature.txt saying hello." },
    branch: "harness/story-demo",
    baseRef: "HEAD",
    harnessHome: s.home,
    reporter: recordingReporter(),
    agentEnvAllow: [],
    sandbox: sandboxOf(true),
    ...args,
  });
  return { outcome, journal: readJournal(join(outcome.runDir, "execution-history.ndjson")) };
}
