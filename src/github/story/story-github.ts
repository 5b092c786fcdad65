/**
 * The story adapter: everything one story asks of GitHub, behind one object, so the runner
 * orchestrates and never calls octokit. It holds the story's two installation tokens (one to
 * report with, one for git), scoped to the story's repository, and redacts every token it
 * handed out, with the App's own secrets, from the text the runner logs or posts.
 */
import type { StoryJob } from "../../queue/index.js";
import { confirmAdmission } from "../triggers/index.js";
import { findStoryPullRequest, markReadyForReview, redactSecrets, type GitHubLog, type StoryPullRequest } from "../index.js";
import { Outbox, type OutboxStory } from "../../outbox/index.js";
import { githubDelivery, type GitHubReporterOptions } from "../report/index.js";
import { gitAuthEnv } from "./git-auth.js";
import { createStartBranch, readBranchTips, type StartBranch, type StartCommitArgs } from "./git-data.js";
import { authenticateInstallation, GIT_TOKEN_PERMISSIONS, STORY_API_PERMISSIONS, type AppOctokit, type Installation } from "./installation.js";
import type { PushWork } from "./outbox.js";
import { ensureDraftPull, type DraftPullArgs, type OpenStoryPull } from "./pull.js";
import { fetchHarnessConfigText } from "./repo-config.js";

export interface StoryGitHubArgs {
  /** The App-level octokit (JWT), from which the installation tokens are minted. */
  appOctokit: () => Promise<AppOctokit>;
  installationId: number;
  /** The story's repository: the only one its tokens reach. */
  repository: { id: number; owner: string; name: string };
  /** Octokit's client-side throttling of the reporting token's requests (default on). */
  throttle?: boolean;
  /** The App's own secrets (webhook secret, private key lines), redacted like the tokens. */
  appSecrets?: readonly string[];
}

/**
 * What the story's reporter is made from: the GitHub reporter's options that belong to the
 * story, its tokens as a live list (a token refreshed mid-story is redacted too).
 */
export type ReporterTarget = Required<
  Pick<GitHubReporterOptions, "octokit" | "owner" | "repo" | "pullNumber" | "issueNumber" | "headSha" | "log" | "installationId" | "secrets">
> &
  Pick<GitHubReporterOptions, "revision" | "revisions">;

/** The story's GitHub, as the runner uses it. */
export interface StoryGitHub {
  /** True once {@link connect} minted the reporting token. */
  readonly connected: boolean;
  /** Mints the reporting token (checks, issues, pull requests; contents read). */
  connect(): Promise<void>;
  /** Mints the git token (contents write) and returns the environment git authenticates with. */
  gitAuthEnv(): Promise<Record<string, string>>;
  /** Whoever queued the job may still write to the repository; if not, the issue is told (false). */
  confirmAdmission(job: StoryJob, log: GitHubLog): Promise<boolean>;
  /** The newest pull request of the story's branch, in any state. */
  findStoryPull(issueNumber: number): Promise<StoryPullRequest | undefined>;
  /** `.github/harness.yml` on the default branch, or undefined when there is none. */
  harnessConfigText(defaultBranch: string): Promise<string | undefined>;
  /** The tips of the default branch and of the branches beginning with `prefix` (branch → commit id), read with the reporting token. */
  branchTips(args: { defaultBranch: string; prefix: string }): Promise<Map<string, string>>;
  /** Makes the start commit and its branch through the Git data API, with the git token (contents: write). */
  createStartBranch(args: Omit<StartCommitArgs, "owner" | "repo">): Promise<StartBranch>;
  /** The story branch's open pull request, opened as a draft when there is none. */
  ensureDraftPull(args: Omit<DraftPullArgs, "owner" | "repo">): Promise<OpenStoryPull>;
  markReadyForReview(pullNodeId: string): Promise<void>;
  /** The story's reporter's target on pull request `pullNumber` at `headSha`. */
  reporterTarget(args: {
    pullNumber: number;
    issueNumber: number;
    headSha: string;
    log: GitHubLog;
    revision?: string;
    revisions?: GitHubReporterOptions["revisions"];
  }): ReporterTarget;
  /** An outbox in memory that tries each write once, pushing with the story's git token. */
  memoryOutbox(log: GitHubLog, pushWork: PushWork): Promise<Outbox>;
  /** `text` without any of the story's tokens or the App's secrets, in any form they take. */
  redact(text: string): string;
  /** The story as the outbox keys it. */
  readonly story: OutboxStory;
}

/** Makes the adapter of one story; nothing is asked of GitHub until {@link StoryGitHub.connect}. */
export function storyGitHub(args: StoryGitHubArgs, issueNumber: number): StoryGitHub {
  const { owner, name: repo, id: repositoryId } = args.repository;
  const seen: string[] = [];
  let api: Installation | undefined;
  let git: Installation | undefined;
  const gitInstallation = async (): Promise<Installation> => (git ??= await mint(false, GIT_TOKEN_PERMISSIONS));
  const connected = (): Installation => {
    if (!api) throw new Error("the story's GitHub is not connected yet");
    return api;
  };
  // The App's octokit is asked for once per connection, and both tokens are minted through it.
  let app: AppOctokit | undefined;
  const mint = async (throttle: boolean, permissions: Readonly<Record<string, string>>): Promise<Installation> =>
    authenticateInstallation(app ?? (app = await args.appOctokit()), args.installationId, { throttle, repositoryIds: [repositoryId], permissions, seen });
  return {
    get connected() {
      return api !== undefined;
    },
    story: { installationId: args.installationId, owner, repo, issueNumber },
    async connect() {
      app = undefined;
      api = await mint(args.throttle !== false, STORY_API_PERMISSIONS);
    },
    async gitAuthEnv() {
      return gitAuthEnv(await (await gitInstallation()).token());
    },
    confirmAdmission: async (job, log) => confirmAdmission(connected().octokit, job, log),
    findStoryPull: async (number) => findStoryPullRequest(connected().octokit, owner, repo, number),
    harnessConfigText: async (defaultBranch) => fetchHarnessConfigText(connected().octokit, { owner, repo, defaultBranch }),
    branchTips: async (tips) => readBranchTips(connected().octokit, { owner, repo, ...tips }),
    createStartBranch: async (start) => createStartBranch((await gitInstallation()).octokit, { owner, repo, ...start }),
    ensureDraftPull: async (pull) => ensureDraftPull(connected().octokit, { owner, repo, ...pull }),
    markReadyForReview: async (pullNodeId) => markReadyForReview(connected().octokit, pullNodeId),
    reporterTarget: (target) => ({ octokit: connected().octokit, installationId: args.installationId, owner, repo, secrets: seen, ...target }),
    memoryOutbox(log, pushWork) {
      return Outbox.open({
        deliver: githubDelivery(async () => connected().octokit),
        log,
        secretsSeen: () => seen,
        pusher: async (_story, push) => pushWork(push, await this.gitAuthEnv()),
      });
    },
    redact: (text) => redactSecrets(text, [...seen, ...(args.appSecrets ?? [])]),
  };
}
