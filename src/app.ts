/**
 * The Probot entry: wires the GitHub room's trigger handlers to the queue's intake and, in a
 * process that runs stories, the runner to the queue's jobs. Nothing else happens here.
 */
import type { ApplicationFunction, Probot } from "probot";
import { GitHubReporter, queueNoticeListeners, handleIssueComment, handleIssueLabeled, handleRetryAction, type TriggerDeps, type TriggerOutcome } from "./github/index.js";
import { DEFAULT_HARNESS_CONFIG, loadWorkflow, parseHarnessConfig, runStory } from "./pipeline/index.js";
import type { StoryQueue } from "./queue/index.js";
import { createStoryRunner, openStoryOutbox, type AppOctokit, type RunnerLog } from "./runner/index.js";

/** The App's own settings (from the environment, see `harness serve`). */
export interface HarnessAppSettings {
  harnessHome: string;
  /** `HARNESS_CONCURRENCY`: stories run at once by this process. */
  concurrency: number;
  /** `HARNESS_AGENT_ENV`: environment names agents may receive. */
  agentEnvAllow: string[];
  /** `HARNESS_STORY_LABEL`: the label that starts a story. */
  labelName: string;
  /** `HARNESS_GITHUB_THROTTLE=off` turns Octokit's client-side throttling of story reporting off. */
  githubThrottle: boolean;
  /** `HARNESS_OUTBOX_MAX_DELAY_MS`: the longest wait between retries of a GitHub write (default 10 minutes). */
  outboxMaxDelayMs?: number;
}

export interface HarnessAppOptions {
  queue: StoryQueue;
  settings: HarnessAppSettings;
  /** False: only enqueue (`harness serve` on a shared queue, or a benchmark of the webhook path). */
  runJobs?: boolean;
}

/** Who the App is on GitHub, learned in the background (the runner tells its own comments apart by it). */
export interface AppIdentity {
  slug?: string;
  id?: number;
}

/** What a story worker needs of Probot: the App's JWT-authenticated octokit and a logger. */
export interface AppHandle {
  /** The App's octokit; with an installation id, one authenticated as that installation. */
  auth: (installationId?: number) => Promise<unknown>;
  log: RunnerLog;
}

/** Builds the Probot application function of story-harness. */
export function harnessApp(options: HarnessAppOptions): ApplicationFunction {
  return (app: Probot) => {
    const { queue, settings } = options;
    // Replies go out after GitHub has its answer: a handler's only wait is the enqueue (and, for
    // a command, the permission check that must precede it).
    const defer = (work: () => Promise<void>): void => {
      setImmediate(() => {
        work().catch((error: unknown) => app.log.warn({ err: { message: String(error) } }, "a reply to a webhook failed"));
      });
    };
    const deps: TriggerDeps = { queue, labelName: settings.labelName, log: app.log, defer };
    const identity = learnAppIdentity(app);
    void identity.ready.then(() => {
      if (identity.slug) deps.appSlug = identity.slug;
      if (identity.id) deps.appId = identity.id;
    });

    const logOutcome = (event: string, deliveryId: string, outcome: TriggerOutcome): void => {
      const { action } = outcome;
      const detail = "reason" in outcome ? { reason: outcome.reason } : { jobId: outcome.jobId };
      app.log.info({ event, deliveryId, action, ...detail }, `${event}: ${action}`);
    };
    app.on("issues.labeled", async (context) => logOutcome("issues.labeled", context.id, await handleIssueLabeled(context, deps)));
    app.on("issue_comment.created", async (context) => logOutcome("issue_comment.created", context.id, await handleIssueComment(context, deps)));
    app.on("check_run.requested_action", async (context) => logOutcome("check_run.requested_action", context.id, await handleRetryAction(context, deps)));

    if (options.runJobs === false) return;
    startStoryWorker({ queue, settings, app, identity });
  };
}

/** Starts running the queue's stories in this process (`harness worker`, or `serve` with its own runner). */
export function startStoryWorker(args: { queue: StoryQueue; settings: HarnessAppSettings; app: AppHandle; identity?: AppIdentity }): void {
  const { queue, settings, app } = args;
  const identity = args.identity ?? learnAppIdentity(app);
  const appOctokit = async (): Promise<AppOctokit> => (await app.auth()) as AppOctokit;
  queue.listen?.(queueNoticeListeners({ installationOctokit: async (id) => (await app.auth(id)) as AppOctokit, log: app.log }));
  const outbox = openStoryOutbox({
    harnessHome: settings.harnessHome, appOctokit, throttle: settings.githubThrottle, log: app.log,
    ...(settings.outboxMaxDelayMs !== undefined ? { policy: { maxDelayMs: settings.outboxMaxDelayMs } } : {}),
  });
  outbox.catch((error: unknown) => app.log.error({ err: { message: String(error) } }, "the outbox could not be opened; reports are tried once"));
  queue.start(
    createStoryRunner({
      appOctokit,
      harnessHome: settings.harnessHome,
      agentEnvAllow: settings.agentEnvAllow,
      githubThrottle: settings.githubThrottle,
      pipeline: { runStory, loadWorkflow: () => loadWorkflow(), parseHarnessConfig, defaultConfig: DEFAULT_HARNESS_CONFIG },
      createReporter: (target) => new GitHubReporter({ ...target, outbox, ...(identity.slug ? { botLogin: `${identity.slug}[bot]` } : {}) }),
      log: app.log,
    }),
  );
}

/** Asks GitHub who the App is, without making start-up wait on it. */
export function learnAppIdentity(app: AppHandle): AppIdentity & { ready: Promise<void> } {
  const identity: AppIdentity & { ready: Promise<void> } = { ready: Promise.resolve() };
  identity.ready = app
    .auth()
    .then((octokit) => (octokit as AppOctokit).rest.apps.getAuthenticated())
    .then((response) => {
      if (response.data?.slug) identity.slug = response.data.slug;
      if (response.data?.id) identity.id = response.data.id;
    })
    .catch((error: unknown) => app.log.warn({ err: { message: String(error) } }, "could not read the App's slug"));
  return identity;
}
