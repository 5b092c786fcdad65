import {
  announceNotices,
  commentNotice,
  postNotices,
  renderAlreadyCompleted,
  renderPushStillWaiting,
  renderSandboxUnavailable,
  renderTooManyInterruptions,
} from "../github/report/index.js";
import { storyBranch, isCompletedStory } from "../github/index.js";
import {
  HARNESS_CONFIG_PATH,
  storyGitHub,
  untilGitHubAnswers,
  type AppOctokit,
  type GitHubDownOptions,
  type ReporterTarget,
  type StoryGitHub,
} from "../github/story/index.js";
import { PUSH_SLOT, type Outbox } from "../outbox/index.js";
import type { JobLease, JobWorker } from "../queue/index.js";
import {
  pruneCachedBaselines,
  TaskSlots,
  type FailureClass,
  type HarnessConfig,
  type RunStoryArgs,
  type StoryOutcome,
  type Workflow,
} from "../pipeline/index.js";
import { runInStepScope } from "../exec/index.js";
import type { RunnerLog } from "./log.js";
import { processLedger, recoverAfterCrash } from "./recovery.js";
import { syncRepoCache } from "./repo-cache.js";
import { deliverStoryWork } from "./deliver-work.js";
import { pushStoryWork } from "./push.js";
import { openStoryPull, startStoryHead, type StoryPull } from "./story-start.js";
import { startReporting, type StoryReporting } from "./story-reporting.js";
import { prepareStoryBranch } from "./story-branch.js";
import { mergeDefaultBranch } from "./base-merge.js";
import { TrackingReporter, type StoryReporter } from "./tracking-reporter.js";
import { describe, reportEnd } from "./story-end.js";
import { recordedRounds, replyOnThreads, startRevision, type RevisionRun } from "./revision-run.js";
import type { RevisionRow } from "../github/report/render/index.js";
import { renderRevisionNotPossible } from "../github/report/index.js";
import { lowDiskReason, pruneRuns, type HousekeepingSettings } from "./housekeeping.js";
import { probeSandboxCached, removeStaleSandboxState, type Sandbox, type SandboxStatus } from "../sandbox/index.js";
import { storyKey } from "../story-key/index.js";

/** The pipeline as the runner uses it (the real one in the App, the same in tests). */
export interface PipelinePort {
  runStory(args: RunStoryArgs): Promise<StoryOutcome>;
  loadWorkflow(): Workflow;
  parseHarnessConfig(text: string, source: string): HarnessConfig;
  defaultConfig: HarnessConfig;
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
  /** Where repository code runs, resolved once at the edge (the App, the CLI) from `HARNESS_SANDBOX`…. */
  sandbox: Sandbox;
  /** The App's own secrets (webhook secret, private key lines), redacted from the runner's logs and comments like its tokens. */
  appSecrets?: readonly string[];
  /** Retention of run directories and the free space a story needs, resolved once at the edge. */
  housekeeping: HousekeepingSettings;
  /** The App's durable outbox, through which the runner's own notices (announcement, end comments) go; one in memory per job when absent. */
  outbox?: Outbox | Promise<Outbox>;
  /** How a job waits while GitHub is down at its start (tests pass a sleep they control). */
  githubDown?: Pick<GitHubDownOptions, "sleep" | "policy">;
  /**
   * The runner's task slots (`HARNESS_CONCURRENCY`), shared by the stories it runs: each story
   * holds one while it runs, and a plan's further tasks at once take the ones still free.
   */
  taskSlots?: number;
  /** The App's bot login (`<slug>[bot]`): its status comment holds the story's revision rounds. */
  botLogin?: () => string | undefined;
}

/** Task slots of a runner that names none (as many as `harness run` has). */
const DEFAULT_RUNNER_SLOTS = 8;

/** Makes the queue's worker: one call runs one job from token to final report. */
export function createStoryRunner(deps: StoryRunnerDeps): JobWorker {
  const { sandbox } = deps;
  // What a previous run of the App left when it was killed goes before any story starts.
  removeStaleSandboxState();
  // Its processes and scratch folders too (recorded when they started), ended before any job resumes.
  void recoverAfterCrash(deps.harnessHome, deps.log);
  const ledger = processLedger(deps.harnessHome);
  // Asked once while it works; asked again after a failure, so a fixed host needs no restart.
  let usable: Promise<SandboxStatus> | undefined;
  // A step whose sandbox could not start means the host changed under the App: the next story asks again.
  sandbox.onStartFailure(() => {
    usable = undefined;
  });
  const sandboxStatus = (): Promise<SandboxStatus> => {
    usable ??= probeSandboxCached(sandbox, deps.harnessHome).then((status) => {
      if (status.state === "unavailable") usable = undefined;
      return status;
    });
    return usable;
  };
  const slots = new TaskSlots(deps.taskSlots ?? DEFAULT_RUNNER_SLOTS);
  // Every process a job starts (git, provisioning, agents, suites, clean clone) gets the stop signal and a ledger record.
  return (lease, signal) => runInStepScope({ signal, ledger }, () => runJob(deps, lease, signal, sandboxStatus, slots));
}

/** Why a story stopped before or outside the pipeline, with the class it is reported under. */
class StoryStop extends Error {
  constructor(
    readonly failureClass: FailureClass,
    message: string,
  ) {
    super(message);
    this.name = "StoryStop";
  }
}

async function runJob(
  deps: StoryRunnerDeps,
  lease: JobLease,
  signal: AbortSignal,
  sandboxStatus: () => Promise<SandboxStatus>,
  slots: TaskSlots,
): Promise<void> {
  const { job } = lease;
  const { owner, name: repo } = job.repository;
  const log = deps.log;
  let pull: StoryPull | undefined;
  // A new story's reporting (waiting for its draft pull request while that is opened), and the draft's failure.
  let reporting: StoryReporting | undefined;
  let draftFailure: unknown;
  const draftStop = new AbortController();
  let tracker: TrackingReporter | undefined;
  let failure: unknown;
  let alreadyCompleted = false;
  // Everything this story asks of GitHub, with tokens for this one repository, each with only what its use needs: reporting, and git.
  const github: StoryGitHub = storyGitHub(
    {
      appOctokit: deps.appOctokit,
      installationId: job.installationId,
      repository: { id: job.repository.id, owner, name: repo },
      throttle: deps.githubThrottle !== false,
      ...(deps.appSecrets ? { appSecrets: deps.appSecrets } : {}),
    },
    job.issue.number,
  );
  const { story, redact } = github;
  // Without the App's outbox (a test, a tool), one in memory that tries each notice once.
  let memoryOutbox: Promise<Outbox> | undefined;
  const outbox = (): Promise<Outbox> => Promise.resolve(deps.outbox ?? (memoryOutbox ??= github.memoryOutbox(log, pushStoryWork)));
  try {
    // Set when the story's branch has had no pull request at all: the draft is then opened without looking for one again.
    let noPullYet = false;
    // The default branch and the story's own (its plan's task branches under it): not every story's.
    const branches = { exact: job.repository.defaultBranch, prefix: storyBranch(job.issue.number) };
    // Their tips on GitHub, when it told them: the cache fetches only when it holds something else.
    let remoteTips: Map<string, string> | undefined;
    // The story's first GitHub calls; while GitHub is down (5xx, refused, retry-after) the job
    // waits and asks again with backoff instead of failing, so it stays queued.
    const opened = await untilGitHubAnswers(
      async () => {
        await github.connect();
        // Asked at once, acted on in order: the admission, the git token, and (for a label) the
        // story's pull request are independent reads, so the job waits for one round trip, not three.
        const admitted = github.confirmAdmission(job, log);
        const gitToken = github.gitAuthEnv();
        const lookup = job.kind !== "retry-blocked" ? github.findStoryPull(job.issue.number) : Promise.resolve(undefined);
        // Read with the same round trip; no answer only means the cache fetches, as it always did.
        const tips = github.branchTips({ defaultBranch: branches.exact, prefix: branches.prefix }).catch(() => undefined);
        // A refusal, or the answer that fails first, decides; the others' failures are then nobody's.
        gitToken.catch(() => undefined);
        lookup.catch(() => undefined);
        // Whoever queued the job must still have write access now; otherwise the issue is told and nothing starts.
        if (!(await admitted)) return "not-admitted";
        await gitToken;
        // A label on a story that already completed starts nothing: asked here, before any clone,
        // so the webhook handler never waits on GitHub.
        const existing = await lookup;
        // A revision works on the story's open pull request only: one merged, closed or gone is answered, and nothing starts.
        if (job.kind === "revise" && (!existing || existing.state !== "open" || existing.merged)) {
          const body = renderRevisionNotPossible(job.issue.number, existing);
          await postNotices(outbox(), story, [commentNotice(`comment:revise-closed:${job.deliveryId}`, job.pullNumber ?? job.issue.number, body)], log);
          return "completed";
        }
        if (job.kind === "start" && existing && isCompletedStory(existing)) {
          await postNotices(
            outbox(),
            story,
            [commentNotice(`comment:already-completed:${job.deliveryId}`, job.issue.number, renderAlreadyCompleted(job.issue.number, existing.url))],
            log,
          );
          log.info({ story: job.storyKey, pull: existing.number }, "story already completed; nothing started");
          return "completed";
        }
        noPullYet = job.kind === "start" && existing === undefined;
        remoteTips = await tips;
        return "open";
      },
      signal,
      { log, what: { story: job.storyKey }, ...deps.githubDown },
    );
    if (opened === "not-admitted" || opened === "completed") {
      alreadyCompleted = true; // nothing started: the reply on the issue is the whole report
      return;
    }
    const status = await sandboxStatus();
    if (status.state === "unavailable") throw new StoryStop("environment", renderSandboxUnavailable(status.reason));
    // Old run directories and baselines no story used for as long go first; then a nearly full disk is this story's report, not a wedged queue.
    const keep = deps.housekeeping;
    try {
      pruneRuns(deps.harnessHome, keep.retentionDays);
      pruneCachedBaselines(deps.harnessHome, keep.retentionDays);
    } catch (error) {
      log.warn({ err: describe(error, redact) }, "removing old run directories or kept baselines failed");
    }
    const lowDisk = lowDiskReason(deps.harnessHome, keep.minFreeBytes);
    if (lowDisk) throw new StoryStop("environment", lowDisk);
    // An earlier run's work still waiting to be pushed goes first: a new run must build on it, not beside it.
    if ((await outbox()).pending(story, PUSH_SLOT) && (await (await outbox()).deliverNow(story, PUSH_SLOT, 1, signal)) === "pending") {
      throw new StoryStop("git-failed", renderPushStillWaiting());
    }
    // Asked now, read after the pull request is there: GitHub answers while git fetches and pushes.
    const configText = github.harnessConfigText(job.repository.defaultBranch);
    configText.catch(() => undefined); // its failure is the story's where it is read, not an unhandled rejection
    const authEnv = await github.gitAuthEnv();
    const repoDir = await syncRepoCache({
      harnessHome: deps.harnessHome,
      owner,
      name: repo,
      cloneUrl: job.repository.cloneUrl,
      authEnv,
      branches,
      ...(remoteTips ? { remoteTips } : {}),
    });
    const untilAnswered = <T>(work: () => Promise<T>): Promise<T> =>
      untilGitHubAnswers(work, signal, { log, what: { story: job.storyKey }, ...deps.githubDown });
    const startArgs = { github, repoDir, defaultBranch: job.repository.defaultBranch, issue: job.issue, authEnv, noPullYet, untilAnswered };
    const head = await startStoryHead(startArgs);
    const opening = openStoryPull(startArgs, head);
    // A new story's draft pull request is opened while its worktree provisions: its reports wait
    // for it in order (PendingReporter). Should GitHub refuse it, the pipeline is stopped.
    if (noPullYet) {
      opening.catch((error: unknown) => {
        draftFailure = error;
        draftStop.abort();
      });
    } else pull = await opening;
    // The rounds recorded in the status comment are carried into every later render of it, so no run forgets them.
    const revisionRows: RevisionRow[] = [];
    if (pull && job.kind !== "revise") revisionRows.push(...(await recordedRounds(github, pull.pullNumber, deps.botLogin?.(), log)));
    reporting = await startReporting({
      pull,
      opening,
      makeReporter: (on) =>
        deps.createReporter(
          github.reporterTarget({
            revisions: revisionRows,
            pullNumber: on.pullNumber,
            issueNumber: job.issue.number,
            headSha: on.headSha,
            log,
            ...(job.issue.updatedAt ? { revision: job.issue.updatedAt } : {}),
          }),
        ),
      durable: deps.outbox !== undefined,
      announce: (opened) =>
        postNotices(outbox(), story, announceNotices(job.issue.number, opened), log, { background: true }).catch((error: unknown) =>
          log.warn({ err: describe(error, redact) }, "announcing the story failed"),
        ),
      onFailure: (error) => log.warn({ err: describe(error, redact) }, "reporting failed"),
    });
    tracker = reporting.tracker;
    const workflow = deps.pipeline.loadWorkflow();
    const readmission = lease.interruptions > 0 || job.kind === "retry-blocked";
    if (lease.interruptions > (deps.maxResumes ?? 1)) {
      throw new StoryStop("interrupted", renderTooManyInterruptions(lease.interruptions));
    }
    const config = readConfig(deps, await configText);
    let revising: RevisionRun | undefined;
    if (job.kind === "revise") {
      revising = await startRevision({ github, job, pull: await opening, config, botLogin: deps.botLogin?.(), log });
      if (revising === undefined) {
        alreadyCompleted = true; // the status comment says why nothing started
        return;
      }
      revisionRows.push(...revising.rows);
    }
    // A re-admission merges into the local branch, so it must be there; a start's task makes it from the remote's.
    await prepareStoryBranch({ repoDir, branch: head.branch, remoteTip: head.headSha, localTip: head.localTip, absentIsFine: job.kind === "start" });
    if (job.kind === "revise" && remoteTips !== undefined && !remoteTips.has(head.branch))
      throw new StoryStop("git-failed", renderRevisionNotPossible(job.issue.number, undefined));
    // A re-admitted story runs on the default branch as it is now (a conflict blocks it as base-conflict).
    if (job.kind === "retry-blocked") {
      const merged = await mergeDefaultBranch({ repoDir, branch: head.branch, defaultBranch: job.repository.defaultBranch });
      if (merged.state === "merged")
        log.info({ story: job.storyKey, base: merged.base, merge: merged.commit }, "story branch brought up to date with the default branch");
    }
    // The story's own slot; its plan's further tasks take the runner's free ones (`slots`).
    const ownSlot = await slots.acquire(signal);
    const outcome = await deps.pipeline
      .runStory({
        repoDir,
        story: { id: storyKey(job.repository.owner, job.repository.name, job.issue.number), title: job.issue.title, body: job.issue.body },
        branch: head.branch,
        baseRef: `refs/remotes/origin/${head.branch}`,
        config,
        configSource: HARNESS_CONFIG_PATH,
        workflow,
        harnessHome: deps.harnessHome,
        reporter: tracker,
        agentEnvAllow: deps.agentEnvAllow,
        redact,
        readmission,
        ...(revising ? { revision: revising.prompt } : {}),
        // The integrity gate judges the work against the default branch, not against a blocked run's commit on the story branch.
        integrityBase: `refs/remotes/origin/${job.repository.defaultBranch}`,
        ...(job.acceptIntegrity === true ? { acceptIntegrity: job.requestedBy } : {}),
        // The job's stop, or GitHub's refusal of the story's draft pull request.
        signal: AbortSignal.any([signal, draftStop.signal]),
        sandbox: deps.sandbox,
        ...(deps.taskSlots !== undefined ? { taskSlots: deps.taskSlots } : {}),
        slots,
      })
      .finally(() => ownSlot.release());
    // Without its pull request the story has nowhere to report or deliver: GitHub's refusal is its end.
    if (draftFailure !== undefined) throw draftFailure;
    pull = await opening;
    // The work is pushed whatever the outcome: a blocked story's work so far is worth a look.
    const end = await deliverStoryWork({
      repoDir,
      pull,
      outcome,
      outbox: await outbox(),
      story: { ...story, pullNumber: pull.pullNumber },
      repositoryId: job.repository.id,
      durable: deps.outbox !== undefined,
      reporter: tracker,
      signal,
    });
    if (end.pushWaiting)
      log.warn({ story: job.storyKey }, "the push waits in the outbox (GitHub could not take it yet); the story's end is reported once it went through");
    log.info({ story: job.storyKey, status: end.status, failureClass: end.failureClass, ...(end.handedOff ? { reports: "outbox" } : {}) }, "story finished");
    if (revising) await replyOnThreads({ github, job, pull, outcome, workflow, log });
  } catch (error) {
    failure = draftFailure ?? error;
  } finally {
    await reporting?.announcing();
    // A story whose pull request never came has no reporter: its end is told on the issue.
    if (reporting?.pending && !(await reporting.pending.arrived())) tracker = undefined;
    const tell = github.connected
      ? (body: string) => postNotices(outbox(), story, [commentNotice(`comment:stopped:${lease.jobId}:${lease.interruptions}`, job.issue.number, body)], log)
      : undefined;
    if (!alreadyCompleted || failure !== undefined)
      await reportEnd({ log, loadWorkflow: () => deps.pipeline.loadWorkflow(), job, lease, tracker, failure, redact, tell, interrupted: signal.aborted });
    // The story's reports are all recorded: the App's outbox lets go of what it delivered for them.
    if (deps.outbox) (await deps.outbox).forget(story);
  }
}

/** Validates `.github/harness.yml` (its text, undefined when there is none); an invalid one stops the story as `config-invalid`. */
function readConfig(deps: StoryRunnerDeps, text: string | undefined): HarnessConfig {
  if (text === undefined) return deps.pipeline.defaultConfig;
  try {
    return deps.pipeline.parseHarnessConfig(text, HARNESS_CONFIG_PATH);
  } catch (error) {
    throw new StoryStop("config-invalid", error instanceof Error ? error.message : String(error));
  }
}
