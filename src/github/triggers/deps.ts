/** What the trigger handlers receive besides Probot's context, and what they answer. */
import type { ProbotOctokit } from "probot";
import { storyKey, type JobIntake, type JobRepository, type StoryJob } from "../../queue/index.js";
import type { GitHubLog } from "../log.js";

export interface TriggerDeps {
  queue: JobIntake;
  /** The label that starts a story; default `story`. */
  labelName?: string;
  /** The App's slug: its comments come from `<slug>[bot]`. */
  appSlug?: string;
  /** The App's id: its check runs and comments carry it. */
  appId?: number;
  log: GitHubLog;
  /** Clock for `enqueuedAt`; tests pass a fixed one. */
  now?: () => Date;
  /**
   * Runs a reply after GitHub has its answer. The App passes one that schedules the work and
   * logs its failure, so a handler answers after enqueueing without waiting on a comment;
   * without it (tests) replies are awaited in place.
   */
  defer?: (work: () => Promise<void>) => void;
}

export const DEFAULT_STORY_LABEL = "story";

/** Why a handler replied instead of enqueueing. */
export type ReplyReason =
  | "help"
  | "unknown-command"
  | "not-permitted"
  | "already-active"
  | "already-completed"
  | "blocked-use-retry"
  | "not-blocked"
  | "not-a-story";

/** What a handler did; returned so the caller can log it and tests can assert it. */
export type TriggerOutcome =
  | { action: "enqueued"; jobId: string; job: StoryJob }
  | { action: "replied"; reason: ReplyReason }
  | { action: "ignored"; reason: string };

/** The repository fields of any webhook payload the handlers take. */
export interface PayloadRepository {
  id: number;
  name: string;
  owner: { login: string };
  clone_url: string;
  default_branch: string;
}

/** Where a handler acts: the repository, its installation and an authenticated octokit. */
export interface TriggerScope {
  octokit: ProbotOctokit;
  owner: string;
  repo: string;
  repository: JobRepository;
  installationId: number;
  deliveryId: string;
  defer?: TriggerDeps["defer"];
}

/** Builds the scope of a delivery, or undefined when it has no installation (the App cannot act). */
export function scopeOf(
  octokit: ProbotOctokit,
  deliveryId: string,
  repository: PayloadRepository,
  installation: { id: number } | undefined | null,
  deps: Pick<TriggerDeps, "defer">,
): TriggerScope | undefined {
  if (!installation) return undefined;
  return {
    ...(deps.defer ? { defer: deps.defer } : {}),
    octokit,
    owner: repository.owner.login,
    repo: repository.name,
    repository: { id: repository.id, owner: repository.owner.login, name: repository.name, cloneUrl: repository.clone_url, defaultBranch: repository.default_branch },
    installationId: installation.id,
    deliveryId,
  };
}

/** The job that starts or re-admits the story of `issue`. */
export function buildJob(
  scope: TriggerScope,
  kind: StoryJob["kind"],
  issue: { number: number; title: string; body: string | null | undefined },
  requestedBy: string,
  deps: TriggerDeps,
  pullNumber?: number,
): StoryJob {
  return {
    storyKey: storyKey(scope.owner, scope.repo, issue.number),
    kind,
    installationId: scope.installationId,
    repository: scope.repository,
    issue: { number: issue.number, title: issue.title, body: issue.body ?? "" },
    ...(pullNumber !== undefined ? { pullNumber } : {}),
    requestedBy,
    deliveryId: scope.deliveryId,
    enqueuedAt: (deps.now ?? (() => new Date()))().toISOString(),
  };
}

/** Posts a comment on an issue or pull request; after the webhook's answer when the scope defers. */
export async function reply(scope: TriggerScope, issueNumber: number, body: string): Promise<void> {
  const post = async (): Promise<void> => {
    await scope.octokit.rest.issues.createComment({ owner: scope.owner, repo: scope.repo, issue_number: issueNumber, body });
  };
  if (scope.defer) scope.defer(post);
  else await post();
}

/** True when the actor is a bot or the App itself, whose commands are never acted on. */
export function isBotActor(actor: { login?: string; type?: string } | null | undefined, deps: TriggerDeps): boolean {
  if (!actor) return true;
  if (actor.type === "Bot") return true;
  return deps.appSlug !== undefined && actor.login === `${deps.appSlug}[bot]`;
}
