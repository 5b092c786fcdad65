/**
 * The Probot entry: wires the GitHub room's trigger handlers to the queue and starts the
 * runner on the queue's jobs. Nothing else happens here.
 */
import type { ApplicationFunction, Probot } from "probot";
import { GitHubReporter, handleIssueComment, handleIssueLabeled, handleRetryAction, type TriggerDeps, type TriggerOutcome } from "./github/index.js";
import { DEFAULT_HARNESS_CONFIG, loadWorkflow, parseHarnessConfig, runStory } from "./pipeline/index.js";
import type { EmbeddedQueue } from "./queue/index.js";
import { createStoryRunner, type AppOctokit } from "./runner/index.js";

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
  /** The App's own secrets (webhook secret, private key and its lines), redacted from all it posts. */
  appSecrets?: readonly string[];
  /** `HARNESS_ALLOWED_BOTS`: bot logins (`name[bot]`) that may start stories; no other bot can. */
  allowedBots?: readonly string[];
}

export interface HarnessAppOptions {
  queue: EmbeddedQueue;
  settings: HarnessAppSettings;
  /** False: only enqueue (a webhook-only process, or a benchmark of the webhook path). */
  runJobs?: boolean;
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
    const appOctokit = async (): Promise<AppOctokit> => (await app.auth()) as AppOctokit;
    // The slug tells the App's own comments apart; learned in the background so start-up never waits on GitHub.
    void appOctokit()
      .then((octokit) => octokit.rest.apps.getAuthenticated())
      .then((response) => {
        if (response.data?.slug) deps.appSlug = response.data.slug;
        if (response.data?.id) deps.appId = response.data.id;
      })
      .catch((error: unknown) => app.log.warn({ err: { message: String(error) } }, "could not read the App's slug"));

    const logOutcome = (event: string, deliveryId: string, outcome: TriggerOutcome): void => {
      const { action } = outcome;
      const detail = "reason" in outcome ? { reason: outcome.reason } : { jobId: outcome.jobId };
      app.log.info({ event, deliveryId, action, ...detail }, `${event}: ${action}`);
    };
    app.on("issues.labeled", async (context) => logOutcome("issues.labeled", context.id, await handleIssueLabeled(context, deps)));
    app.on("issue_comment.created", async (context) => logOutcome("issue_comment.created", context.id, await handleIssueComment(context, deps)));
    app.on("check_run.requested_action", async (context) => logOutcome("check_run.requested_action", context.id, await handleRetryAction(context, deps)));

    if (options.runJobs === false) return;
    queue.start(
      createStoryRunner({
        appOctokit,
        harnessHome: settings.harnessHome,
        agentEnvAllow: settings.agentEnvAllow,
        githubThrottle: settings.githubThrottle,
        pipeline: { runStory, loadWorkflow: () => loadWorkflow(), parseHarnessConfig, defaultConfig: DEFAULT_HARNESS_CONFIG },
        createReporter: (target) =>
          new GitHubReporter({ ...target, appSecrets: settings.appSecrets ?? [], ...(deps.appSlug ? { botLogin: `${deps.appSlug}[bot]` } : {}) }),
        log: app.log,
      }),
    );
  };
}
