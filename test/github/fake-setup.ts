/**
 * Shared setup for the GitHub room's tests against the fake GitHub: a repository, story pull
 * requests on real branches, Probot contexts around real webhook payloads, a recording log.
 */
import { randomUUID } from "node:crypto";
import { Context, type ProbotOctokit } from "probot";
import { pino } from "pino";
import type { EmitterWebhookEvent, EmitterWebhookEventName } from "@octokit/webhooks";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import type { GitHubLog } from "../../src/github/index.js";
import type { FakeGitHub } from "../support/fake-github/index.js";

export const OWNER = "octo-org";
export const NAME = "demo";

/** A log that keeps what it was told, so tests can assert a failure was logged (and what). */
export class RecordingLog implements GitHubLog {
  readonly lines: Array<{ level: string; details: object; message?: string }> = [];
  info(details: object, message?: string): void {
    this.lines.push({ level: "info", details, message });
  }
  warn(details: object, message?: string): void {
    this.lines.push({ level: "warn", details, message });
  }
  error(details: object, message?: string): void {
    this.lines.push({ level: "error", details, message });
  }
}

/** Creates branch `harness/story-<issue>` with one commit on top of main, directly in the fake's bare repository. */
export async function pushStoryBranch(gh: FakeGitHub, issue: number, message = `Start story #${issue}`): Promise<string> {
  const bareDir = gh.state.repo(OWNER, NAME)?.bareDir ?? "";
  const ref = `refs/heads/harness/story-${issue}`;
  const parent =
    (await git(["rev-parse", "--verify", "--quiet", ref], { cwd: bareDir }).catch(() => "")).trim() ||
    (await git(["rev-parse", "refs/heads/main"], { cwd: bareDir })).trim();
  const tree = (await git(["rev-parse", `${parent}^{tree}`], { cwd: bareDir })).trim();
  const commit = (await git(["commit-tree", tree, "-p", parent, "-m", message], { cwd: bareDir, env: HARNESS_IDENTITY })).trim();
  await git(["update-ref", ref, commit], { cwd: bareDir });
  return commit;
}

/** Opens the story's draft pull request as the App would; answers its number and head sha. */
export async function openStoryPull(gh: FakeGitHub, octokit: ProbotOctokit, issue: number): Promise<{ number: number; headSha: string }> {
  const headSha = await pushStoryBranch(gh, issue);
  const { data } = await octokit.rest.pulls.create({
    owner: OWNER,
    repo: NAME,
    head: `harness/story-${issue}`,
    base: "main",
    title: `Story #${issue}`,
    body: `Closes #${issue}`,
    draft: true,
  });
  return { number: data.number, headSha };
}

const silentLogger = pino({ level: "silent" });

/** A Probot context for a payload the fake built, as Probot would hand it to a handler. */
export function contextFor<E extends EmitterWebhookEventName>(
  name: E,
  payload: Record<string, unknown>,
  octokit: ProbotOctokit,
  id: string = randomUUID(),
): Context<E> {
  // The fake builds payloads from GitHub's published examples; their static type is GitHub's schema.
  const event = { id, name, payload } as unknown as EmitterWebhookEvent<E>;
  return new Context<E>(event, octokit, silentLogger);
}
