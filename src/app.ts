/**
 * The Probot entry: wires the GitHub room's trigger handlers to the queue's intake and, in a
 * process that runs stories, the runner to the queue's jobs. Nothing else happens here.
 */
import type { ApplicationFunction, ApplicationFunctionOptions, Probot } from "probot";
import { collectLocalWork, collectRuns, collectStatus, statusHandler } from "./status/index.js";
import {
  DEFAULT_MAX_INFLIGHT,
  doorStatus,
  type DoorStatus,
  guardWebhooks,
  RedeliverySweeper,
  ShedLedger,
  HANDLER_BUDGET_MS,
  withinBudget,
  type NodeMiddleware,
  type WebhookGuardOptions,
} from "./github/door/index.js";
import { GitHubReporter, queueNoticeListeners } from "./github/report/index.js";
import { openStoryOutbox, readAppIdentity, type AppOctokit } from "./github/story/index.js";
import { doorEvent, TRIGGER_HANDLERS, triggerOf, type TriggerDeps, type TriggerEvent, type TriggerName, type TriggerOutcome } from "./github/triggers/index.js";
import { DEFAULT_HARNESS_CONFIG, loadWorkflow, parseHarnessConfig, runStory } from "./pipeline/index.js";
import type { StoryQueue } from "./queue/index.js";
import { createStoryRunner, housekeepingFromEnv, pushStoryWork, type HousekeepingSettings, type RunnerLog } from "./runner/index.js";
import { HOST_NETWORK_WARNING, probeSandboxCached, sandboxFromEnv, UNSANDBOXED_WARNING, type Sandbox } from "./sandbox/index.js";

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
  /** The App's own secrets (webhook secret, private key and its lines), redacted from all it posts. */
  appSecrets?: readonly string[];
  /** `HARNESS_ALLOWED_BOTS`: bot logins (`name[bot]`) that may start stories; no other bot can. */
  allowedBots?: readonly string[];
  /**
   * WEBHOOK_SECRET (Probot's default when unset). With it, deliveries are checked at the door
   * (size, arrival, signature) before Probot reads or logs them; without it (benchmarks of a
   * bare server) Probot's middleware alone answers.
   */
  webhookSecret?: string;
  /** WEBHOOK_PATH, Probot's webhook path. */
  webhookPath?: string;
  /** `HARNESS_MAX_INFLIGHT`: webhook requests in flight before the door answers 503 (default {@link DEFAULT_MAX_INFLIGHT}). */
  maxInflight?: number;
  /** `HARNESS_MAX_INFLIGHT_PER_CLIENT`: of those, held by one client at most (default a quarter of them). */
  maxInflightPerClient?: number;
  /**
   * Ask GitHub to redeliver failed deliveries (default on): at start-up and once shedding has
   * stopped. Only where the door is on (a webhook secret).
   */
  redeliver?: boolean;
  /** How long the door waits for the handlers before it answers 202 (the guard's default, 9 s). */
  answerWithinMs?: number;
  /** How long a webhook handler may keep GitHub waiting (default {@link HANDLER_BUDGET_MS}). */
  handlerBudgetMs?: number;
  /** Where repository code runs (`HARNESS_SANDBOX`…); the environment's sandbox when absent. */
  sandbox?: Sandbox;
  /** `HARNESS_STATUS_TOKEN`: turns on `GET /harness` (and `/harness/status.json`) for those who hold it. */
  statusToken?: string;
  /** Where the status page links to GitHub (from GHE_HOST/GHE_PROTOCOL). */
  webBase?: string;
  /** `HARNESS_RETENTION_DAYS`, `HARNESS_MIN_FREE_MB`; from the environment when absent. */
  housekeeping?: HousekeepingSettings;
}

export interface HarnessAppOptions {
  queue: StoryQueue;
  settings: HarnessAppSettings;
  /** False: only enqueue (`harness serve` on a shared queue, or a benchmark of the webhook path). */
  runJobs?: boolean;
  /** Receives the story worker this App starts (when it runs jobs), for its stop. */
  onWorker?: (worker: StoryWorkerHandle) => void;
}

/** How long a stopping process gives its outbox for the writes due now (within the queue's close grace of 5 s). */
export const OUTBOX_DRAIN_MS = 2000;

/** What a process that runs stories does as it stops, once its queue closed. */
export interface StoryWorkerHandle {
  /**
   * Delivers the outbox's writes due now (the end reports its last jobs handed off, which a job
   * does not wait for), for at most `withinMs`; what is left stays on disk for the next start.
   */
  drainOutbox(withinMs?: number): Promise<void>;
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
  return (app: Probot, probotOptions?: ApplicationFunctionOptions) => {
    const { queue, settings } = options;
    const sweeper =
      settings.webhookSecret !== undefined && settings.redeliver !== false
        ? new RedeliverySweeper({ appOctokit: async () => (await app.auth()) as AppOctokit, log: app.log })
        : undefined;
    const ledger = new ShedLedger({ log: app.log, ...(sweeper ? { onQuiet: () => void sweeper.sweep() } : {}) });
    // The door's part of the status exists only where the door does (a webhook secret).
    const door = (): { door?: DoorStatus } => (settings.webhookSecret === undefined ? {} : { door: doorStatus(ledger, sweeper?.state()) });
    probotOptions?.addHandler(
      statusHandler({
        token: settings.statusToken,
        webBase: settings.webBase ?? "https://github.com",
        collect: async () => collectStatus({ home: settings.harnessHome, jobs: await queue.snapshot(), queue, secrets: settings.appSecrets ?? [], ...door() }),
      }),
    );
    // Deliveries that failed while the App was down (or shed before a restart) are asked for again.
    if (sweeper) setImmediate(() => void sweeper.sweep());
    // Replies go out after GitHub has its answer: a handler's only wait is the enqueue (and, for
    // a command, the permission check that must precede it).
    const defer = (work: () => Promise<void>): void => {
      setImmediate(() => {
        work().catch((error: unknown) => app.log.warn({ err: { message: String(error) } }, "a reply to a webhook failed"));
      });
    };
    const deps: TriggerDeps = {
      queue,
      labelName: settings.labelName,
      log: app.log,
      defer,
      ...(settings.allowedBots ? { allowedBots: settings.allowedBots } : {}),
    };
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
    // Each handler answers within its budget, whatever GitHub's or the disk's pace; late work is logged when it ends.
    const budget = settings.handlerBudgetMs ?? HANDLER_BUDGET_MS;
    const answer = async (event: string, deliveryId: string, work: Promise<TriggerOutcome>): Promise<void> => {
      const outcome = await withinBudget(work, budget, (late) => logOutcome(event, deliveryId, late), app.log, { event, deliveryId });
      if (outcome) logOutcome(event, deliveryId, outcome);
    };
    const trigger = <E extends TriggerName>(name: E, event: TriggerEvent<E>): Promise<void> => answer(name, event.id, TRIGGER_HANDLERS[name](event, deps));
    app.on("issues.labeled", (context) => trigger("issues.labeled", context));
    app.on("issue_comment.created", (context) => trigger("issue_comment.created", context));
    app.on("check_run.requested_action", (context) => trigger("check_run.requested_action", context));
    app.on("pull_request_review.submitted", (context) => trigger("pull_request_review.submitted", context));
    app.on("check_suite.completed", (context) => trigger("check_suite.completed", context));
    if (settings.webhookSecret !== undefined) {
      // The door hands verified deliveries to the handlers itself, each with its octokit built on demand (see triggers/route.ts).
      const auth = app.auth.bind(app);
      const receive = async (event: { id: string; name: string; payload: unknown }): Promise<void> => {
        const name = triggerOf(event.name, event.payload);
        if (name) await trigger(name, doorEvent(auth, event));
      };
      guardProbotWebhooks(app, {
        secret: settings.webhookSecret,
        path: settings.webhookPath ?? DEFAULT_WEBHOOK_PATH,
        shed: {
          maxInflight: settings.maxInflight ?? DEFAULT_MAX_INFLIGHT,
          ledger,
          ...(settings.maxInflightPerClient !== undefined ? { maxInflightPerClient: settings.maxInflightPerClient } : {}),
        },
        receive,
        ...(settings.answerWithinMs !== undefined ? { answerWithinMs: settings.answerWithinMs } : {}),
      });
    }

    if (options.runJobs === false) return;
    const worker = startStoryWorker({ queue, settings, app, identity });
    options.onWorker?.(worker);
  };
}

/** Starts running the queue's stories in this process (`harness worker`, or `serve` with its own runner). */
export function startStoryWorker(args: { queue: StoryQueue; settings: HarnessAppSettings; app: AppHandle; identity?: AppIdentity }): StoryWorkerHandle {
  const { queue, settings, app } = args;
  const identity = args.identity ?? learnAppIdentity(app);
  const appOctokit = async (): Promise<AppOctokit> => (await app.auth()) as AppOctokit;
  const outbox = openStoryOutbox({
    harnessHome: settings.harnessHome,
    appOctokit,
    throttle: settings.githubThrottle,
    log: app.log,
    pushWork: pushStoryWork,
    ...(settings.outboxMaxDelayMs !== undefined ? { policy: { maxDelayMs: settings.outboxMaxDelayMs } } : {}),
  });
  outbox.catch((error: unknown) => app.log.error({ err: { message: String(error) } }, "the outbox could not be opened; reports are tried once"));
  const drainOutbox = async (withinMs = OUTBOX_DRAIN_MS): Promise<void> => {
    await outbox.then(
      (opened) => opened.drain(withinMs),
      () => undefined,
    );
  };
  queue.listen?.(queueNoticeListeners({ outbox, log: app.log }));
  // On Redis, this worker's outbox, quarantine and runs are on its own disk: published for every process's status.
  queue.shareLocalWork?.({
    home: settings.harnessHome,
    collect: async () => ({ ...(await collectLocalWork(settings.harnessHome)), runs: collectRuns(settings.harnessHome, settings.appSecrets ?? []) }),
    // At close, before the last report: the end reports the last jobs handed off go out if GitHub takes them.
    settle: () => drainOutbox(),
  });
  const sandbox = settings.sandbox ?? sandboxFromEnv();
  // Said at start-up, loudly; the runner itself refuses stories while the sandbox cannot work.
  void probeSandboxCached(sandbox, settings.harnessHome).then((status) => {
    if (status.state === "off") app.log.warn({ sandbox: "off" }, UNSANDBOXED_WARNING);
    if (status.state === "on" && status.hostNetwork) app.log.warn({ sandboxNet: "host" }, HOST_NETWORK_WARNING);
    if (status.state === "unavailable")
      app.log.error({ sandbox: "unavailable" }, `The sandbox cannot run on this host; stories will be refused: ${status.reason}`);
  });
  const runner = createStoryRunner({
    appOctokit,
    botLogin: () => (identity.slug ? `${identity.slug}[bot]` : undefined),
    harnessHome: settings.harnessHome,
    agentEnvAllow: settings.agentEnvAllow,
    githubThrottle: settings.githubThrottle,
    sandbox,
    appSecrets: settings.appSecrets ?? [],
    outbox,
    taskSlots: settings.concurrency,
    housekeeping: settings.housekeeping ?? housekeepingFromEnv(),
    pipeline: { runStory, loadWorkflow: () => loadWorkflow(), parseHarnessConfig, defaultConfig: DEFAULT_HARNESS_CONFIG },
    // The target carries the revision the story was admitted at (its status comment names it).
    createReporter: (target) =>
      new GitHubReporter({ ...target, outbox, appSecrets: settings.appSecrets ?? [], ...(identity.slug ? { botLogin: `${identity.slug}[bot]` } : {}) }),
    log: app.log,
  });
  queue.start(runner);
  return { drainOutbox };
}

/** Asks GitHub who the App is, without making start-up wait on it. */
export function learnAppIdentity(app: AppHandle): AppIdentity & { ready: Promise<void> } {
  const identity: AppIdentity & { ready: Promise<void> } = { ready: Promise.resolve() };
  identity.ready = app
    .auth()
    .then((octokit) => readAppIdentity(octokit as AppOctokit))
    .then((found) => {
      if (found.slug) identity.slug = found.slug;
      if (found.id) identity.id = found.id;
    })
    .catch((error: unknown) => app.log.warn({ err: { message: String(error) } }, "could not read the App's slug"));
  return identity;
}

/** Probot's default webhook path. */
const DEFAULT_WEBHOOK_PATH = "/api/github/webhooks";

/**
 * Puts the webhook guard in front of Probot's webhook middleware. Probot's server asks the
 * App's Probot instance for that middleware when it starts, after loading the App, so the
 * instance hands out the guarded one; nothing reaches Probot's body reading, or its logging of
 * a delivery whose signature failed, without passing the guard first.
 */
function guardProbotWebhooks(
  app: Probot,
  options: {
    secret: string;
    path: string;
    shed: { maxInflight: number; maxInflightPerClient?: number; ledger: ShedLedger };
    answerWithinMs?: number;
    receive: NonNullable<WebhookGuardOptions["receive"]>;
  },
): void {
  const original = app.getNodeMiddleware.bind(app);
  app.getNodeMiddleware = async (middlewareOptions) => {
    const inner = (await original(middlewareOptions)) as NodeMiddleware;
    return guardWebhooks(inner, { ...options, log: app.log }) as Awaited<ReturnType<Probot["getNodeMiddleware"]>>;
  };
}
