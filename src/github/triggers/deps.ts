/** What the trigger handlers receive besides Probot's context, and what they answer. */
import type { EmitterWebhookEventName } from "@octokit/webhooks";
import type { Context, ProbotOctokit } from "probot";
import type { JobIntake, JobRepository, StoryJob } from "../../queue/index.js";
import { storyKey } from "../../story-key/index.js";
import { isAllowedBot, isBotLogin, type AdmissionPolicy } from "./admission.js";
import type { GitHubLog } from "../index.js";
import { singleLine } from "../report/render/index.js";

export interface TriggerDeps {
  queue: JobIntake;
  /** The label that starts a story; default `story`. */
  labelName?: string;
  /** The App's slug: its comments come from `<slug>[bot]`. */
  appSlug?: string;
  /** The App's id: its check runs and comments carry it. */
  appId?: number;
  /** `HARNESS_ALLOWED_BOTS`: the only bot logins whose labels, commands and Retry presses count. */
  allowedBots?: readonly string[];
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
  "help" | "unknown-command" | "not-permitted" | "already-active" | "already-completed" | "blocked-use-retry" | "not-blocked" | "not-a-story";

/** What a handler did; returned so the caller can log it and tests can assert it. */
export type TriggerOutcome =
  { action: "enqueued"; jobId: string; job: StoryJob } | { action: "replied"; reason: ReplyReason } | { action: "ignored"; reason: string };

/** The repository fields of any webhook payload the handlers take. */
export interface PayloadRepository {
  id: number;
  name: string;
  owner: { login: string };
  clone_url: string;
  default_branch: string;
}

/**
 * A delivery as a trigger handler takes it: Probot's context, or the door's own event whose
 * octokit is built on demand. Building an installation octokit costs more heap than the rest of
 * a delivery's path, and a label (the busiest event) never calls GitHub before its answer.
 */
export interface TriggerEvent<E extends EmitterWebhookEventName> {
  id: string;
  payload: Context<E>["payload"];
  /** An octokit authenticated as the delivery's installation, or a function that builds one on its first call. */
  octokit: ProbotOctokit | (() => Promise<ProbotOctokit>);
}

/** Where a handler acts: the repository, its installation and an authenticated octokit. */
export interface TriggerScope {
  /** The installation's octokit, built on the first call (once): only a handler that calls GitHub pays for it. */
  octokit: () => Promise<ProbotOctokit>;
  owner: string;
  repo: string;
  repository: JobRepository;
  installationId: number;
  deliveryId: string;
  /**
   * The event's own identity (the issue, label, time and sender of a label; a comment's id; a
   * check run and who pressed its button): a signed body replayed under a new delivery id has
   * the same one, so the queue starts nothing twice.
   */
  eventKey?: string;
  defer?: TriggerDeps["defer"];
}

/** Builds the scope of a delivery, or undefined when it has no installation (the App cannot act). */
export function scopeOf(
  octokit: TriggerEvent<EmitterWebhookEventName>["octokit"],
  deliveryId: string,
  repository: PayloadRepository,
  installation: { id: number } | undefined | null,
  deps: Pick<TriggerDeps, "defer">,
): TriggerScope | undefined {
  if (!installation) return undefined;
  // A plain literal: one that starts with a spread is built as a dictionary, 2.3 KiB on every
  // delivery in a heap profile (`npm run bench -- webhook-latency --alloc`).
  return {
    defer: deps.defer,
    octokit: typeof octokit === "function" ? once(octokit) : () => Promise.resolve(octokit),
    owner: repository.owner.login,
    repo: repository.name,
    repository: {
      id: repository.id,
      owner: repository.owner.login,
      name: repository.name,
      cloneUrl: repository.clone_url,
      defaultBranch: repository.default_branch,
    },
    installationId: installation.id,
    deliveryId,
  };
}

/** `build`, called at most once: later calls share its promise. */
function once<T>(build: () => Promise<T>): () => Promise<T> {
  let built: Promise<T> | undefined;
  return () => (built ??= build());
}

/** The job that starts or re-admits the story of `issue`. */
export function buildJob(
  scope: TriggerScope,
  kind: StoryJob["kind"],
  issue: { number: number; title: string; body: string | null | undefined; updatedAt?: string | null },
  requestedBy: string,
  deps: TriggerDeps,
  pullNumber?: number,
  acceptIntegrity = false,
): StoryJob {
  return {
    storyKey: storyKey(scope.owner, scope.repo, issue.number),
    kind,
    installationId: scope.installationId,
    repository: scope.repository,
    // One line: the title becomes a commit subject and a pull request title, where a line break would let it add trailers.
    // The text a writer admitted, frozen with the job: an edit after this is not what the agents see.
    issue: { number: issue.number, title: singleLine(issue.title), body: issue.body ?? "", ...(issue.updatedAt ? { updatedAt: issue.updatedAt } : {}) },
    // Stryker disable next-line ConditionalExpression: a job with `pullNumber: undefined` validates and is stored as one without it
    ...(pullNumber !== undefined ? { pullNumber } : {}),
    requestedBy,
    ...(acceptIntegrity ? { acceptIntegrity: true as const } : {}),
    deliveryId: scope.deliveryId,
    ...(scope.eventKey ? { eventKey: scope.eventKey } : {}),
    enqueuedAt: (deps.now ?? (() => new Date()))().toISOString(),
  };
}

/** Posts a comment on an issue or pull request; after the webhook's answer when the scope defers. */
export async function reply(scope: TriggerScope, issueNumber: number, body: string): Promise<void> {
  const post = async (): Promise<void> => {
    await (await scope.octokit()).rest.issues.createComment({ owner: scope.owner, repo: scope.repo, issue_number: issueNumber, body });
  };
  if (scope.defer) scope.defer(post);
  else await post();
}

/** True when the actor is the App itself or a bot the operator did not allowlist: their events are never acted on. */
export function isBotActor(actor: { login?: string; type?: string } | null | undefined, deps: TriggerDeps): boolean {
  if (!actor) return true;
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: said first, and said again below: `<slug>[bot]` is a bot login and isAllowedBot never allows the App's own
  if (deps.appSlug !== undefined && actor.login === `${deps.appSlug}[bot]`) return true;
  return isBotLogin(actor) && !isAllowedBot(actor, admissionPolicy(deps));
}

/** The admission policy of the triggers' dependencies. */
export function admissionPolicy(deps: TriggerDeps): AdmissionPolicy {
  return { ...(deps.allowedBots ? { allowedBots: deps.allowedBots } : {}), ...(deps.appSlug ? { appSlug: deps.appSlug } : {}) };
}
