/**
 * Who may start a story: a decision made from GitHub's current state, never from the payload
 * alone. A person needs write, maintain or admin permission on the repository, asked of GitHub
 * when the job starts (a writer downgraded after queueing starts nothing) and, for a command or
 * a Retry press, already when the event arrives. A bot never starts a story unless the operator allowlists its login
 * (`HARNESS_ALLOWED_BOTS`); an allowlisted bot has no repository role to check.
 */
import type { ProbotOctokit } from "probot";
import type { StoryJob } from "../../queue/index.js";
import type { GitHubLog } from "../index.js";
import { canRunCommands } from "./permissions.js";
import { renderNotAdmitted } from "../report/render/index.js";

export interface Actor {
  login?: string;
  type?: string;
}

/** Who the App must never act for, whatever the allowlist: itself. */
export interface AdmissionPolicy {
  allowedBots?: readonly string[];
  appSlug?: string;
}

/** True for a bot account: GitHub's type `Bot`, or a `name[bot]` login. */
export function isBotLogin(actor: Actor): boolean {
  return actor.type === "Bot" || (actor.login ?? "").toLowerCase().endsWith("[bot]");
}

/** True when `actor` is a bot the operator allowed to start stories (never the App itself). */
export function isAllowedBot(actor: Actor, policy: AdmissionPolicy): boolean {
  const login = (actor.login ?? "").toLowerCase();
  if (login === "" || (policy.appSlug !== undefined && login === `${policy.appSlug}[bot]`.toLowerCase())) return false;
  return (policy.allowedBots ?? []).some((allowed) => allowed.toLowerCase() === login);
}

/** The door's answer for one actor. */
export type Admission = "admitted" | "bot" | "not-permitted";

/** Decides whether `actor` may start or re-admit a story in the repository, asking GitHub for their permission. */
export async function admitActor(octokit: ProbotOctokit, owner: string, repo: string, actor: Actor, policy: AdmissionPolicy): Promise<Admission> {
  if (isBotLogin(actor)) return isAllowedBot(actor, policy) ? "admitted" : "bot";
  if (!actor.login) return "not-permitted";
  return (await canRunCommands(octokit, owner, repo, actor.login)) ? "admitted" : "not-permitted";
}

/**
 * Asked by the runner when a job starts, before anything is cloned: does whoever queued it
 * (labelled the issue, commented, pressed Retry) have write access now? When not, the issue gets one reply and the job ends having started
 * nothing. A bot's job was admitted by the allowlist at the door and has no role to re-check.
 */
export async function confirmAdmission(octokit: ProbotOctokit, job: StoryJob, log: GitHubLog): Promise<boolean> {
  if (isBotLogin({ login: job.requestedBy })) return true;
  const { owner, name: repo } = job.repository;
  if (await canRunCommands(octokit, owner, repo, job.requestedBy)) return true;
  log.warn({ story: job.storyKey, requestedBy: job.requestedBy }, "whoever queued the job has no write access now; nothing started");
  await octokit.rest.issues.createComment({ owner, repo, issue_number: job.issue.number, body: renderNotAdmitted(job.requestedBy, job.issue.number) });
  return false;
}
