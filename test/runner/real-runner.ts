/**
 * The runner as the App builds it (the real pipeline, the GitHub reporter) against the fake
 * GitHub, and the leases the tests hand it: one place for what every runner test sets up.
 */
import { ProbotOctokit } from "probot";
import { GitHubReporter, openStoryOutbox, type AppOctokit, type Outbox } from "../../src/github/index.js";
import { DEFAULT_HARNESS_CONFIG, loadWorkflow, parseHarnessConfig, runStory } from "../../src/pipeline/index.js";
import { storyKey, type JobLease, type JobWorker, type StoryJob } from "../../src/queue/index.js";
import { createStoryRunner, pushStoryWork, type RunnerLog, type StoryRunnerDeps } from "../../src/runner/index.js";
import type { FakeGitHub } from "../support/fake-github/index.js";

/** The App's octokit (JWT) on the fake; `quiet`: no retries or throttling of its own, as `harness serve` configures it. */
export function appOctokitOf(fake: FakeGitHub, options: { baseUrl?: string; quiet?: boolean } = {}): AppOctokit {
  const quiet = options.quiet ? { retry: { enabled: false }, throttle: { enabled: false } } : {};
  return new ProbotOctokit({ auth: { appId: fake.appId, privateKey: fake.privateKey }, baseUrl: options.baseUrl ?? fake.apiUrl, ...quiet }) as AppOctokit;
}

/** The real runner in `home`; with `outbox`, its reporters and notices go through that outbox, as in the App. */
export function realRunner(fake: FakeGitHub, home: string, log: RunnerLog, extra: Partial<StoryRunnerDeps> = {}): JobWorker {
  const appOctokit = appOctokitOf(fake);
  const outbox = extra.outbox;
  return createStoryRunner({
    appOctokit: async () => appOctokit,
    harnessHome: home,
    agentEnvAllow: [],
    githubThrottle: false,
    pipeline: { runStory, loadWorkflow: () => loadWorkflow(), parseHarnessConfig, defaultConfig: DEFAULT_HARNESS_CONFIG },
    createReporter: (target) => new GitHubReporter(outbox ? { ...target, outbox } : target),
    log,
    ...extra,
  });
}

/** The App's outbox in `home`, as an App process opens it at start-up (a second one is the restarted App), retrying fast. */
export async function openTestOutbox(fake: FakeGitHub, home: string, log: RunnerLog): Promise<Outbox> {
  const octokit = appOctokitOf(fake);
  return openStoryOutbox({ harnessHome: home, appOctokit: async () => octokit, throttle: false, log, pushWork: pushStoryWork, policy: { baseDelayMs: 20, maxDelayMs: 200 } });
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
