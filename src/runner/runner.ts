import { randomUUID } from "node:crypto";
import { announceNotices, commentNotice, confirmAdmission, PUSH_SLOT, findStoryPullRequest, isCompletedStory, Outbox, postNotices, redactSecrets, renderAlreadyCompleted, renderStoryStopped, untilGitHubAnswers, type GitHubDownOptions, type OutboxStory } from "../github/index.js";
import type { JobLease, JobWorker, StoryJob } from "../queue/index.js";
import type { FailureClass, HistoryEvent } from "../pipeline/index.js";
import { declaredChecks, failureClassOf, TaskSlots, type HarnessConfig, type RunStoryArgs, type StoryOutcome, type Workflow } from "../pipeline/index.js";
import { runInStepScope } from "../exec/index.js";
import { gitAuthEnv, redactToken } from "./git-auth.js";
import { processLedger, recoverAfterCrash } from "./recovery.js";
import { fetchHarnessConfigText, HARNESS_CONFIG_PATH } from "./repo-config.js";
import { syncRepoCache } from "./repo-cache.js";
import { deliverStoryWork } from "./deliver-work.js";
import { storyPusher } from "./push.js";
import { ensureStoryPull, type StoryPull } from "./story-start.js";
import { prepareStoryBranch } from "./story-branch.js";
import { mergeDefaultBranch } from "./base-merge.js";
import { authenticateInstallation, GIT_TOKEN_PERMISSIONS, STORY_API_PERMISSIONS, type AppOctokit, type Installation } from "./token.js";
import { TrackingReporter, type StoryReporter } from "./tracking-reporter.js";
import { housekeepingFromEnv, lowDiskReason, pruneRuns, type HousekeepingSettings } from "./housekeeping.js";
import { probeSandbox, removeStaleSandboxState, sandboxFromEnv, type Sandbox, type SandboxStatus } from "../sandbox/index.js";

/** The pipeline as the runner uses it (the real one in the App, the same in tests). */
export interface PipelinePort {
  runStory(args: RunStoryArgs): Promise<StoryOutcome>;
  loadWorkflow(): Workflow;
  parseHarnessConfig(text: string, source: string): HarnessConfig;
  defaultConfig: HarnessConfig;
}

export interface RunnerLog {
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}

/** What the reporter of one story is made from. */
export interface ReporterTarget {
  octokit: AppOctokit;
  installationId: number;
  owner: string;
  repo: string;
  pullNumber: number;
  issueNumber: number;
  headSha: string;
  log: RunnerLog;
  secrets: readonly string[];
}

export interface StoryRunnerDeps {
  /** The App-level octokit (JWT), from which installation tokens are made. */
  appOctokit: () => Promise<AppOctokit>;
  harnessHome: string;
  /** `HARNESS_AGENT_ENV`: the names agents may receive. */
  agentEnvAllow: readonly string[];
  pipeline: PipelinePort;
  createReporter: (target: ReporterTarget) => StoryReporter;
  log: RunnerLog;
  /** Octokit's client-side throttling of the installation's requests (default on). */
  githubThrottle?: boolean;
  /** How many times an interrupted story is resumed before it is reported blocked (`interrupted`). */
  maxResumes?: number;
  /** Where repository code runs; the environment's sandbox (`HARNESS_SANDBOX`) when absent. */
  sandbox?: Sandbox;
  /** The App's own secrets (webhook secret, private key lines), redacted from the runner's logs and comments like its tokens. */
  appSecrets?: readonly string[];
  /** Retention of run directories and the free space a story needs; from the environment when absent. */
  housekeeping?: HousekeepingSettings;
  /** The App's durable outbox, through which the runner's own notices (announcement, end comments) go; one in memory per job when absent. */
  outbox?: Outbox | Promise<Outbox>;
  /** How a job waits while GitHub is down at its start (tests pass a sleep they control). */
  githubDown?: Pick<GitHubDownOptions, "sleep" | "policy">;
  /**
   * The runner's task slots (`HARNESS_CONCURRENCY`), shared by the stories it runs: each story
   * holds one while it runs, and a plan's further tasks at once take the ones still free.
   */
  taskSlots?: number;
}

/** Task slots of a runner that names none (as many as `harness run` has). */
const DEFAULT_RUNNER_SLOTS = 8;

/** Makes the queue's worker: one call runs one job from token to final report. */
export function createStoryRunner(deps: StoryRunnerDeps): JobWorker {
  const sandbox = deps.sandbox ?? sandboxFromEnv();
  const housekeeping = deps.housekeeping ?? housekeepingFromEnv();
  // What a previous run of the App left when it was killed goes before any story starts.
  removeStaleSandboxState();
  // Its processes and scratch folders too (recorded when they started), ended before any job resumes.
  void recoverAfterCrash(deps.harnessHome, deps.log);
  const ledger = processLedger(deps.harnessHome);
  // Asked once while it works; asked again after a failure, so a fixed host needs no restart.
  let usable: Promise<SandboxStatus> | undefined;
  const sandboxStatus = (): Promise<SandboxStatus> => {
    usable ??= probeSandbox(sandbox).then((status) => {
      if (status.state === "unavailable") usable = undefined;
      return status;
    });
    return usable;
  };
  const slots = new TaskSlots(deps.taskSlots ?? DEFAULT_RUNNER_SLOTS);
  // Every process a job starts (git, provisioning, agents, suites, clean clone) gets the stop signal and a ledger record.
  return (lease, signal) => runInStepScope({ signal, ledger }, () => runJob({ ...deps, sandbox, housekeeping }, lease, signal, sandboxStatus, slots));
}

/** Why a story stopped before or outside the pipeline, with the class it is reported under. */
class StoryStop extends Error {
  constructor(readonly failureClass: FailureClass, message: string) {
    super(message);
    this.name = "StoryStop";
  }
}

async function runJob(deps: StoryRunnerDeps, lease: JobLease, signal: AbortSignal, sandboxStatus: () => Promise<SandboxStatus>, slots: TaskSlots): Promise<void> {
  const { job } = lease;
  const { owner, name: repo } = job.repository;
  const log = deps.log;
  let installation: Installation | undefined;
  let pull: StoryPull | undefined;
  let tracker: TrackingReporter | undefined;
  let failure: unknown;
  let announcing: Promise<void> | undefined;
  let alreadyCompleted = false;
  let gitInstallation: Installation | undefined;
  const tokensSeen = (): string[] => [...(installation?.tokensSeen() ?? []), ...(gitInstallation?.tokensSeen() ?? [])];
  // Tokens by value first (a form no pattern knows), then every secret form the GitHub room knows.
  const redact = (text: string): string => redactSecrets(tokensSeen().reduce((acc, token) => redactToken(acc, token), text), [...tokensSeen(), ...(deps.appSecrets ?? [])]);
  const story: OutboxStory = { installationId: job.installationId, owner, repo, issueNumber: job.issue.number };
  // Without the App's outbox (a test, a tool), one in memory that tries each notice once.
  let memoryOutbox: Promise<Outbox> | undefined;
  const outbox = (): Promise<Outbox> =>
    Promise.resolve(deps.outbox ?? (memoryOutbox ??= Outbox.open({ octokitFor: async () => installation!.octokit, log, pusher: storyPusher(async () => gitAuthEnv(await gitInstallation!.token())) })));
  try {
    // The story's first GitHub calls; while GitHub is down (5xx, refused, retry-after) the job
    // waits and asks again with backoff instead of failing, so it stays queued.
    const opened = await untilGitHubAnswers(async () => {
      // Tokens for this one repository, each with only what its use needs: reporting, and git.
      const appOctokit = await deps.appOctokit();
      const scope = { repositoryIds: [job.repository.id] };
      installation = await authenticateInstallation(appOctokit, job.installationId, { throttle: deps.githubThrottle !== false, ...scope, permissions: STORY_API_PERMISSIONS });
      // Whoever queued the job must still have write access now; otherwise the issue is told and nothing starts.
      if (!(await confirmAdmission(installation.octokit, job, log))) return "not-admitted";
      gitInstallation = await authenticateInstallation(appOctokit, job.installationId, { throttle: false, ...scope, permissions: GIT_TOKEN_PERMISSIONS });
      // A label on a story that already completed starts nothing: asked here, before any clone,
      // so the webhook handler never waits on GitHub.
      if (job.kind === "start") {
        const existing = await findStoryPullRequest(installation.octokit, owner, repo, job.issue.number);
        if (existing && isCompletedStory(existing)) {
          await postNotices(outbox(), story, [commentNotice(`comment:already-completed:${job.deliveryId}`, job.issue.number, renderAlreadyCompleted(job.issue.number, existing.url))], log);
          log.info({ story: job.storyKey, pull: existing.number }, "story already completed; nothing started");
          return "completed";
        }
      }
      return { installation, gitInstallation };
    }, signal, { log, what: { story: job.storyKey }, ...deps.githubDown });
    if (opened === "not-admitted" || opened === "completed") {
      alreadyCompleted = true; // nothing started: the reply on the issue is the whole report
      return;
    }
    installation = opened.installation;
    const gitToken = opened.gitInstallation;
    const status = await sandboxStatus();
    if (status.state === "unavailable") throw new StoryStop("environment", `The sandbox cannot run on this host, so this story was not started: ${status.reason}.`);
    // Old run directories go first; then a nearly full disk is this story's report, not a wedged queue.
    const keep = deps.housekeeping ?? housekeepingFromEnv();
    try {
      pruneRuns(deps.harnessHome, keep.retentionDays);
    } catch (error) {
      log.warn({ err: describe(error, redact) }, "removing old run directories failed");
    }
    const lowDisk = lowDiskReason(deps.harnessHome, keep.minFreeBytes);
    if (lowDisk) throw new StoryStop("environment", lowDisk);
    // An earlier run's work still waiting to be pushed goes first: a new run must build on it, not beside it.
    if ((await outbox()).pending(story, PUSH_SLOT) && (await (await outbox()).deliverNow(story, PUSH_SLOT, 1, signal)) === "pending") {
      throw new StoryStop("git-failed", "An earlier run's work of this story is still waiting to be pushed (GitHub could not take it yet), so no new run was started. It is pushed on its own; label the issue again once the pull request holds it.");
    }
    const authEnv = gitAuthEnv(await gitToken.token());
    const repoDir = await syncRepoCache({ harnessHome: deps.harnessHome, owner, name: repo, cloneUrl: job.repository.cloneUrl, authEnv });
    pull = await ensureStoryPull({ octokit: installation.octokit, repoDir, owner, repo, defaultBranch: job.repository.defaultBranch, issue: job.issue, authEnv });
    const reporter = deps.createReporter({
      octokit: installation.octokit, installationId: job.installationId, owner, repo, pullNumber: pull.pullNumber, issueNumber: job.issue.number, headSha: pull.headSha, log, secrets: tokensSeen(),
    });
    // The end is held until the work is pushed (deliverStoryWork): a conclusion never claims what was not delivered.
    tracker = new TrackingReporter(reporter, (error) => log.warn({ err: describe(error, redact) }, "reporting failed"), true);
    if (pull.opened) {
      const opened = pull;
      // After the first check run, so that under GitHub.com's client-side pacing (one write a second) the check run comes first.
      tracker.afterFirstEvent = () => {
        announcing = postNotices(outbox(), story, announceNotices(job.issue.number, opened), log)
          .catch((error: unknown) => log.warn({ err: describe(error, redact) }, "announcing the story failed"));
      };
    }
    const workflow = deps.pipeline.loadWorkflow();
    const start = startEvent(job, workflow, lease.interruptions > 0 || job.kind === "retry-blocked");
    if (lease.interruptions > (deps.maxResumes ?? 1)) {
      throw new StoryStop("interrupted", `The App stopped ${lease.interruptions} times while this story ran; it was not resumed again. Use /harness retry-blocked to run it once more.`);
    }
    const config = await readConfig(deps, installation.octokit, job);
    await prepareStoryBranch({ repoDir, branch: pull.branch });
    // A re-admitted story runs on the default branch as it is now (a conflict blocks it as base-conflict).
    if (job.kind === "retry-blocked") {
      const merged = await mergeDefaultBranch({ repoDir, branch: pull.branch, defaultBranch: job.repository.defaultBranch });
      if (merged.state === "merged") log.info({ story: job.storyKey, base: merged.base, merge: merged.commit }, "story branch brought up to date with the default branch");
    }
    // The story's own slot; its plan's further tasks take the runner's free ones (`slots`).
    const ownSlot = await slots.acquire(signal);
    const outcome = await deps.pipeline.runStory({
      repoDir,
      story: { id: storyIdOf(job), title: job.issue.title, body: job.issue.body },
      branch: pull.branch,
      baseRef: `refs/remotes/origin/${pull.branch}`,
      config,
      configSource: HARNESS_CONFIG_PATH,
      workflow,
      harnessHome: deps.harnessHome,
      reporter: tracker,
      agentEnvAllow: deps.agentEnvAllow,
      readmission: start.readmission,
      signal,
      ...(deps.sandbox ? { sandbox: deps.sandbox } : {}),
      ...(deps.taskSlots !== undefined ? { taskSlots: deps.taskSlots } : {}),
      slots,
    }).finally(() => ownSlot.release());
    // The work is pushed whatever the outcome: a blocked story's work so far is worth a look.
    const end = await deliverStoryWork({
      repoDir, pull, outcome, octokit: installation.octokit, outbox: await outbox(), story: { ...story, pullNumber: pull.pullNumber }, repositoryId: job.repository.id, durable: deps.outbox !== undefined, reporter, tracker, signal,
    });
    if (end.pushWaiting) log.warn({ story: job.storyKey }, "the push waits in the outbox (GitHub could not take it yet); the story's end is reported once it went through");
    log.info({ story: job.storyKey, status: end.status, failureClass: end.failureClass }, "story finished");
  } catch (error) {
    failure = error;
  } finally {
    await announcing;
    const tell = installation ? (body: string) => postNotices(outbox(), story, [commentNotice(`comment:stopped:${lease.jobId}:${lease.interruptions}`, job.issue.number, body)], log) : undefined;
    if (!alreadyCompleted || failure !== undefined) await reportEnd({ deps, job, lease, tracker, failure, redact, tell, interrupted: signal.aborted });
  }
}

/** Reads and validates `.github/harness.yml`; an invalid one stops the story as `config-invalid`. */
async function readConfig(deps: StoryRunnerDeps, octokit: AppOctokit, job: StoryJob): Promise<HarnessConfig> {
  const text = await fetchHarnessConfigText(octokit, { owner: job.repository.owner, repo: job.repository.name, defaultBranch: job.repository.defaultBranch });
  if (text === undefined) return deps.pipeline.defaultConfig;
  try {
    return deps.pipeline.parseHarnessConfig(text, HARNESS_CONFIG_PATH);
  } catch (error) {
    throw new StoryStop("config-invalid", error instanceof Error ? error.message : String(error));
  }
}

/** A story is its issue in its repository: `octo/repo#42` (two repositories' issue #42 are two stories). */
export function storyIdOf(job: Pick<StoryJob, "repository" | "issue">): string {
  return `${job.repository.owner}/${job.repository.name}#${job.issue.number}`;
}

function startEvent(job: StoryJob, workflow: Workflow, readmission: boolean): Extract<HistoryEvent, { kind: "run.started" }> {
  return {
    kind: "run.started",
    at: new Date().toISOString(),
    storyId: storyIdOf(job),
    runId: randomUUID(),
    title: job.issue.title,
    stages: workflow.stages.map((stage) => stage.id),
    checks: declaredChecks(workflow),
    maxAttempts: workflow.maxAttempts,
    readmission,
  };
}

interface EndArgs {
  deps: StoryRunnerDeps;
  job: StoryJob;
  lease: JobLease;
  tracker: TrackingReporter | undefined;
  failure: unknown;
  redact: (text: string) => string;
  /** Comments on the story's issue (through the outbox); absent before the App could authenticate. */
  tell: ((body: string) => Promise<void>) | undefined;
  interrupted: boolean;
}

/**
 * The runner's `finally`: a story whose end the pipeline did not report is reported blocked
 * here, through the reporter when there is one, else as a comment on the issue, else in the
 * log. Never throws: reporting itself may fail.
 */
async function reportEnd(args: EndArgs): Promise<void> {
  const { deps, job, tracker, failure, redact } = args;
  if (args.interrupted && !tracker?.ended) {
    // The App is stopping: the job stays queued on disk and resumes on the next start.
    deps.log.warn({ story: job.storyKey }, "story interrupted by shutdown; it resumes on the next start");
    return;
  }
  if (failure === undefined && tracker?.ended) return;
  const failureClass: FailureClass = failureClassOf(failure);
  const detail = redact(failure === undefined ? "The pipeline ended without reporting an outcome." : describe(failure, redact).message);
  deps.log.error({ story: job.storyKey, failureClass, err: { message: detail } }, "story stopped");
  try {
    if (tracker && !tracker.ended) {
      const workflow = safeWorkflow(deps);
      await tracker.block({ failureClass, detail, ...(workflow ? { start: startEvent(job, workflow, args.lease.interruptions > 0) } : {}) });
      return;
    }
    // No reporter yet (the story never started), or the story's end was reported but what
    // followed failed (pushing the result, marking the pull request ready): say so on the issue.
    if (args.tell) await args.tell(renderStoryStopped(tracker ? "finished, but its result could not be delivered" : "could not start", failureClass, detail));
  } catch (error) {
    deps.log.error({ story: job.storyKey, err: describe(error, redact) }, "reporting the story's end failed");
  }
}

function safeWorkflow(deps: StoryRunnerDeps): Workflow | undefined {
  try {
    return deps.pipeline.loadWorkflow();
  } catch {
    return undefined;
  }
}

function describe(error: unknown, redact: (text: string) => string): { message: string; status?: number } {
  const message = redact(error instanceof Error ? error.message : String(error));
  const status = error instanceof Error ? (error as { status?: unknown }).status : undefined;
  return typeof status === "number" ? { message, status } : { message };
}

