/**
 * The trigger handlers by event, and the door's own way to them. Probot's `receive` builds an
 * installation octokit (and a child logger) for every delivery before any handler runs: the
 * largest share of a delivery's heap (38 KiB of the App's 96 KiB in a heap profile of
 * `npm run bench -- webhook-latency --alloc`), and on the busiest event, a label, no handler uses
 * it before the answer. A verified delivery from the door goes
 * straight to its handler with an octokit built only when the handler first asks for one, as
 * Probot would have built it (`app.auth(installationId)`, the `x-github-delivery` header on its
 * requests). Probot's own `receive` still reaches the same handlers through `app.on`.
 */
import type { ProbotOctokit } from "probot";
import { handleIssueComment } from "./comment.js";
import type { TriggerDeps, TriggerEvent, TriggerOutcome } from "./deps.js";
import { handleIssueLabeled } from "./labeled.js";
import { handleRetryAction } from "./requested-action.js";
import { handlePullRequestReview } from "./review.js";
import { handleCheckSuite } from "./check-suite.js";

/** The deliveries (`<event>.<action>`) the App acts on. */
export type TriggerName = "issues.labeled" | "issue_comment.created" | "check_run.requested_action" | "pull_request_review.submitted" | "check_suite.completed";

/** Each trigger's handler. */
export const TRIGGER_HANDLERS: { [E in TriggerName]: (event: TriggerEvent<E>, deps: TriggerDeps) => Promise<TriggerOutcome> } = {
  "issues.labeled": handleIssueLabeled,
  "issue_comment.created": handleIssueComment,
  "check_run.requested_action": handleRetryAction,
  "pull_request_review.submitted": handlePullRequestReview,
  "check_suite.completed": handleCheckSuite,
};

/** The trigger a delivery is for, or undefined when the App does not act on it (Probot would find no handler either). */
export function triggerOf(event: string, payload: unknown): TriggerName | undefined {
  const action = (payload as { action?: unknown } | null)?.action;
  const name = `${event}.${String(action)}`;
  return Object.hasOwn(TRIGGER_HANDLERS, name) ? (name as TriggerName) : undefined;
}

/** Probot's `app.auth`: the App's octokit, or with an installation id one authenticated as that installation. */
export type AppAuth = (installationId?: number) => Promise<unknown>;

/**
 * A function that builds, on its call, the octokit Probot's context would have carried: the
 * delivery's installation's (the handlers call it at most once per delivery, see `scopeOf`),
 * sending the delivery id in `x-github-delivery` as Probot's context does. A payload without an
 * installation gets a function that refuses: no handler asks for one there.
 */
export function installationOctokit(auth: AppAuth, payload: unknown, deliveryId: string): () => Promise<ProbotOctokit> {
  const installationId = (payload as { installation?: { id?: unknown } | null } | null)?.installation?.id;
  return async () => {
    if (typeof installationId !== "number") throw new Error("the delivery names no installation to act as");
    const octokit = (await auth(installationId)) as ProbotOctokit;
    octokit.hook.before("request", (options) => {
      options.headers["x-github-delivery"] = deliveryId;
    });
    return octokit;
  };
}

/** A verified delivery from the door, as its trigger's event (the octokit on demand). */
export function doorEvent<E extends TriggerName>(auth: AppAuth, delivery: { id: string; payload: unknown }): TriggerEvent<E> {
  return { id: delivery.id, payload: delivery.payload as TriggerEvent<E>["payload"], octokit: installationOctokit(auth, delivery.payload, delivery.id) };
}
