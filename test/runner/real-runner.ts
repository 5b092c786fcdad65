/**
 * The runner as the App builds it (the real pipeline, the GitHub reporter) against the fake
 * GitHub, and the leases the tests hand it: one place for what every runner test sets up.
 */
import { GitHubReporter } from "../../src/github/report/index.js";
import { DEFAULT_HARNESS_CONFIG, loadWorkflow, parseHarnessConfig, runStory } from "../../src/pipeline/index.js";
import type { JobLease, JobWorker, StoryJob } from "../../src/queue/index.js";
import { storyKey } from "../../src/story-key/index.js";
import { createStoryRunner, housekeepingFromEnv, type RunnerLog, type StoryRunnerDeps } from "../../src/runner/index.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";
import type { FakeGitHub } from "../support/fake-github/index.js";
import { appOctokitOf } from "../support/outbox-fixture.js";

/** The real runner in `home`; with `outbox`, its reporters and notices go through that outbox, as in the App. */
export function realRunner(fake: FakeGitHub, home: string, log: RunnerLog, extra: Partial<StoryRunnerDeps> = {}): JobWorker {
  const appOctokit = appOctokitOf(fake);
  const outbox = extra.outbox;
  return createStoryRunner({
    appOctokit: async () => appOctokit,
    harnessHome: home,
    agentEnvAllow: [],
    // The tests' edge: the environment's settings, as the App resolves them.
    sandbox: sandboxFromEnv(),
    housekeeping: housekeepingFromEnv(),
    githubThrottle: false,
    pipeline: { runStory, loadWorkflow: () => loadWorkflow(), parseHarnessConfig, defaultConfig: DEFAULT_HARNESS_CONFIG },
    createReporter: (target) => new GitHubReporter(outbox ? { ...target, outbox } : target),
    log,
    ...extra,
  });
}

export interface LeaseSpec {
  name: string;
  number: number;
  repository: { id: number; cloneUrl: string };
  title?: string;
  body?: string;
  kind?: StoryJob["kind"];
  interruptions?: number;
}

/** A lease on a job for issue `number` of acme/<name>, queued by its owner. */
export function storyLease(fake: FakeGitHub, spec: LeaseSpec): JobLease {
  const kind = spec.kind ?? "start";
  const suffix = kind === "start" ? spec.name : `${spec.name}-${kind}`;
  return {
    jobId: `job-${suffix}`,
    interruptions: spec.interruptions ?? 0,
    job: {
      storyKey: storyKey("acme", spec.name, spec.number),
      kind,
      installationId: fake.installationId,
      repository: { id: spec.repository.id, owner: "acme", name: spec.name, cloneUrl: spec.repository.cloneUrl, defaultBranch: "main" },
      issue: { number: spec.number, title: spec.title ?? "A story", body: spec.body ?? "" },
      requestedBy: "acme",
      deliveryId: `d-${suffix}`,
      enqueuedAt: new Date().toISOString(),
    },
  };
}
