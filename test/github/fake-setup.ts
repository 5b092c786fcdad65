/**
 * Shared setup for the GitHub room's tests against the fake GitHub: a repository, story pull
 * requests on real branches, Probot contexts around real webhook payloads, a recording log.
 */
import { randomUUID } from "node:crypto";
import { beforeAll } from "@jest/globals";
import { Context, type ProbotOctokit } from "probot";
import { pino } from "pino";
import type { EmitterWebhookEvent, EmitterWebhookEventName } from "@octokit/webhooks";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import type { GitHubLog } from "../../src/github/index.js";
import type { TriggerDeps } from "../../src/github/triggers/index.js";
import type { EmbeddedQueue } from "../../src/queue/index.js";
import { fakeOctokit } from "../support/fake-github/client.js";
import { issueCommentCreatedPayload, type FakeGitHub, type RepoRole } from "../support/fake-github/index.js";
import { triggerDepsEach } from "../support/trigger-deps.js";

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

/** What the trigger tests share: the repository's App client, a fresh queue and handler dependencies per test, and comment helpers. */
export interface TriggerSetup {
  /** The App's installation client on the fake (made before the file's first test). */
  readonly octokit: ProbotOctokit;
  /** The current test's embedded queue. */
  readonly queue: EmbeddedQueue;
  /** The current test's handler dependencies around that queue, with a {@link RecordingLog}. */
  readonly deps: TriggerDeps;
  /** The bodies of the comments on issue or pull request `number`, oldest first. */
  commentsOn(number: number): string[];
  /** Posts `body` as `user`'s comment on `number`; the Probot context of its `issue_comment.created` delivery. */
  commented(number: number, body: string, user?: string): Context<"issue_comment.created">;
}

/**
 * Registers, in the calling file, the setup of the trigger tests: the repository `OWNER/NAME`
 * with a README, the given people's permissions and bot accounts, and the App's client (before
 * the file's first test); a fresh queue and dependencies in a folder named `prefix…` before each
 * test, closed and checked for unexpected requests after it.
 */
export function useTriggerSetup(
  gh: FakeGitHub,
  options: { prefix: string; permissions: Record<string, RepoRole>; bots?: string[]; now?: () => Date },
): TriggerSetup {
  let octokit: ProbotOctokit | undefined;
  const fixture = triggerDepsEach(
    options.prefix,
    () => gh,
    () => new RecordingLog(),
    options.now ? { now: options.now } : {},
  );
  beforeAll(async () => {
    await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# demo\n" } });
    for (const bot of options.bots ?? []) gh.addBotAccount(bot);
    for (const [login, permission] of Object.entries(options.permissions)) gh.setPermission(OWNER, NAME, login, permission);
    octokit = fakeOctokit(gh, { installation: true });
  });
  const client = (): ProbotOctokit => {
    if (!octokit) throw new Error("useTriggerSetup: the client exists only inside the file's tests");
    return octokit;
  };
  return {
    get octokit() {
      return client();
    },
    get queue() {
      return fixture.queue;
    },
    get deps() {
      return fixture.deps;
    },
    commentsOn: (number) => gh.state.comments.filter((comment) => comment.issueNumber === number).map((comment) => comment.body),
    commented(number, body, user = "writer") {
      const comment = gh.addComment(OWNER, NAME, number, { body, user });
      return contextFor("issue_comment.created", issueCommentCreatedPayload(gh, { owner: OWNER, name: NAME, comment }), client());
    },
  };
}
