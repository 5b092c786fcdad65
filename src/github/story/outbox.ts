/**
 * The App's outbox for story reports, under `<harnessHome>/outbox`: opened once per process,
 * delivering with installation octokits that do not retry by themselves (the outbox does,
 * honouring `retry-after` and surviving restarts), and handing a story's final push, with
 * credentials minted for that one push, to the git work of the runner ({@link PushWork}).
 */
import { join } from "node:path";
import type { GitHubLog } from "../index.js";
import { Outbox, type OutboxStory, type PushWrite, type RetryPolicy } from "../../outbox/index.js";
import { githubDelivery } from "../report/index.js";
import { gitAuthEnv } from "./git-auth.js";
import { authenticateInstallation, GIT_TOKEN_PERMISSIONS, STORY_API_PERMISSIONS, type AppOctokit, type Installation } from "./installation.js";

/**
 * Pushes a story's work with git, given the credentials for it (`gitAuthEnv`): the runner's
 * part of a push entry. Throws an error with `retriable: false` when GitHub refused it for good.
 */
export type PushWork = (push: PushWrite, authEnv: Record<string, string>) => Promise<void>;

export interface StoryOutboxArgs {
  harnessHome: string;
  appOctokit: () => Promise<AppOctokit>;
  /** Octokit's client-side throttling (GitHub.com's one write a second). */
  throttle: boolean;
  log: GitHubLog;
  /** The git work of a push entry. */
  pushWork: PushWork;
  policy?: Partial<RetryPolicy>;
}

/** The folder of the outbox in a data directory. */
export function outboxDir(harnessHome: string): string {
  return join(harnessHome, "outbox");
}

/** Opens the outbox, loads what an earlier process left, and starts delivering. */
export async function openStoryOutbox(args: StoryOutboxArgs): Promise<Outbox> {
  const installations = new Map<number, Promise<Installation>>();
  const ready: Installation[] = [];
  const octokitFor = async (installationId: number): Promise<AppOctokit> => {
    let installation = installations.get(installationId);
    if (!installation) {
      installation = (async () =>
        authenticateInstallation(await args.appOctokit(), installationId, { throttle: args.throttle, retry: false, permissions: STORY_API_PERMISSIONS }))();
      installations.set(installationId, installation);
      // A failed token request is tried afresh next time.
      installation.then(
        (made) => ready.push(made),
        () => installations.delete(installationId),
      );
    }
    return (await installation).octokit;
  };
  // Every token of these installations, refreshed ones included, is redacted from what reporters post.
  const secretsSeen = (): string[] => ready.flatMap((installation) => installation.tokensSeen());
  // A story's final push: a token for its one repository, allowed to write contents only, per attempt.
  const pusher = async (story: OutboxStory, push: PushWrite): Promise<void> => {
    const git = await authenticateInstallation(await args.appOctokit(), story.installationId, {
      throttle: false,
      retry: false,
      repositoryIds: [push.repositoryId],
      permissions: GIT_TOKEN_PERMISSIONS,
    });
    await args.pushWork(push, gitAuthEnv(await git.token()));
  };
  const outbox = await Outbox.open({
    dir: outboxDir(args.harnessHome),
    deliver: githubDelivery(octokitFor),
    secretsSeen,
    pusher,
    log: args.log,
    ...(args.policy ? { policy: args.policy } : {}),
  });
  outbox.start();
  return outbox;
}
