import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { git, GitError, NO_AUTO_MAINTENANCE, repositoryLocks } from "../workspace/index.js";
import { maintainRepoCache } from "./cache-maintenance.js";

/** Fetch and clone may take a while on a large repository; a hung server must not hang the runner. */
const NETWORK_TIMEOUT_MS = 15 * 60_000;

/** Where a repository's cache lives: `<harnessHome>/repos/<owner>/<name>`. */
export function repoCacheDir(harnessHome: string, owner: string, name: string): string {
  for (const part of [owner, name]) {
    if (!/^[A-Za-z0-9_.-]+$/.test(part) || part === "." || part === "..") throw new Error(`invalid repository name part '${part}'`);
  }
  return join(harnessHome, "repos", owner, name);
}

export interface RepoCacheArgs {
  harnessHome: string;
  owner: string;
  name: string;
  cloneUrl: string;
  /** From {@link gitAuthEnv}: the token reaches git through its environment only. */
  authEnv: Record<string, string>;
  /**
   * The remote's branches to bring up to date (a story's: the default branch, exactly, and every
   * branch whose name begins with its own, which need not exist yet); every branch when absent.
   * One story's fetch then neither lists nor downloads the other stories' branches, however
   * many the repository has.
   */
  branches?: { exact: string; prefix?: string };
  /**
   * The tips of `branches` on the remote as GitHub just reported them (branch name → commit id).
   * When the cache's `refs/remotes/origin/` holds exactly these, names and ids, the fetch would
   * change nothing and is not made. Only used with `branches` (a fetch of every branch is always made).
   */
  remoteTips?: ReadonlyMap<string, string>;
}

/**
 * Brings the repository's cache up to date and returns its folder: created once (bare, the
 * remote's branches under `refs/remotes/origin/`), then refreshed with `git fetch --prune` (of
 * `branches` when given), so the second story of a repository starts without a full clone. The remote URL in `.git/config` carries no
 * credentials. Git's own automatic maintenance is off in the cache; after a fetch its gc runs
 * when git's limits say it is due (cache-maintenance.ts).
 */
export async function syncRepoCache(args: RepoCacheArgs): Promise<string> {
  const dir = repoCacheDir(args.harnessHome, args.owner, args.name);
  // Serialised with every other change to this repository in the process (worktrees, fetches).
  return repositoryLocks.with(dir, async () => {
    // No automatic gc or maintenance after the fetch: the cache's gc runs below, and only when due.
    const fetch = async (): Promise<string> => {
      const output = await git([...NO_AUTO_MAINTENANCE, "fetch", "--quiet", "--prune", "origin", ...refspecs(args.branches)], {
        cwd: dir,
        env: args.authEnv,
        timeoutMs: NETWORK_TIMEOUT_MS,
      });
      // A gc that fails leaves the cache as it was: the story goes on, as after git's own auto gc.
      await maintainRepoCache(dir).catch(() => false);
      return output;
    };
    // The URL this process set and then fetched from is set already: one git process less per story.
    if (originUrls.get(dir) === args.cloneUrl && existsSync(join(dir, "HEAD"))) {
      if (args.remoteTips && args.branches && (await cacheHolds(dir, args.branches, args.remoteTips))) return dir;
      originUrls.delete(dir);
      try {
        await fetch();
        originUrls.set(dir, args.cloneUrl);
        return dir;
      } catch (error) {
        // GitHub refused or did not answer: the cache is not at fault. Otherwise it is checked as below.
        if (error instanceof GitError && (error.kind === "auth" || error.kind === "timeout")) throw error;
      }
    }
    originUrls.delete(dir);
    const usable =
      existsSync(join(dir, "HEAD")) &&
      (await git(["remote", "set-url", "origin", args.cloneUrl], { cwd: dir }).then(
        () => true,
        () => false,
      ));
    // A cache left half-made by a crash is made again rather than trusted.
    if (!usable) await createCache(dir, args.cloneUrl);
    await fetch();
    originUrls.set(dir, args.cloneUrl);
    return dir;
  });
}

/**
 * What a fetch asks for: the configured refspec (every branch) unless told which. The exact
 * branch must exist; the prefix is a pattern, so a story branch not pushed yet is no error (and
 * one removed on the remote is pruned here, as with every branch).
 */
function refspecs(branches: RepoCacheArgs["branches"]): string[] {
  if (!branches) return [];
  const map = (ref: string): string => `+refs/heads/${ref}:refs/remotes/origin/${ref}`;
  return [map(branches.exact), ...(branches.prefix !== undefined ? [map(`${branches.prefix}*`)] : [])];
}

/**
 * True when the cache's tracking refs of `branches` (the ones a fetch of them sets or prunes) are
 * exactly `tips`, names and ids (one git process). Git's patterns: a name matches exactly or up
 * to a slash, and `*` stops at a slash, hence the `/**` one. A ref listed that GitHub did not
 * name only makes the cache fetch.
 */
async function cacheHolds(dir: string, branches: NonNullable<RepoCacheArgs["branches"]>, tips: ReadonlyMap<string, string>): Promise<boolean> {
  const base = "refs/remotes/origin/";
  const patterns = [`${base}${branches.exact}`, ...(branches.prefix !== undefined ? [`${base}${branches.prefix}*`, `${base}${branches.prefix}*/**`] : [])];
  // Stryker disable next-line BooleanLiteral: for-each-ref takes no optional lock either way; readOnly says what the call promises
  const listed = await git(["for-each-ref", "--format=%(objectname) %(refname)", ...patterns], { cwd: dir, readOnly: true }).catch(() => undefined);
  if (listed === undefined) return false;
  const held = new Map(
    listed
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const space = line.indexOf(" ");
        return [line.slice(space + 1 + base.length), line.slice(0, space)] as const;
      }),
  );
  return held.size === tips.size && [...tips].every(([name, sha]) => held.get(name) === sha);
}

/** Brings one branch of the remote into the cache (`refs/remotes/origin/<branch>`), as the story's fetch would. */
export async function fetchRemoteBranch(dir: string, branch: string, authEnv: Record<string, string>): Promise<void> {
  await repositoryLocks.with(dir, () =>
    git([...NO_AUTO_MAINTENANCE, "fetch", "--quiet", "origin", `+refs/heads/${branch}:refs/remotes/origin/${branch}`], {
      cwd: dir,
      env: authEnv,
      timeoutMs: NETWORK_TIMEOUT_MS,
    }),
  );
}

/** Records in the cache that the remote's `branch` is `sha` (a commit the cache has): what a fetch of it would set. */
export async function setRemoteBranch(dir: string, branch: string, sha: string): Promise<void> {
  await repositoryLocks.with(dir, () => git(["update-ref", `refs/remotes/origin/${branch}`, sha], { cwd: dir }));
}

/** The clone URL each cache's `origin` was set to by this process, as long as its last fetch worked. */
const originUrls = new Map<string, string>();

/** Runs `work` while no other git work of this process changes the cache folder. */
export function withRepoCache<T>(dir: string, work: () => Promise<T>): Promise<T> {
  return repositoryLocks.with(dir, work);
}

async function createCache(dir: string, cloneUrl: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  // init + fetch rather than clone --bare: the remote's branches stay under
  // refs/remotes/origin, so local story branches and the remote's never collide.
  await git(["init", "--bare", "--quiet"], { cwd: dir });
  await git(["remote", "add", "origin", cloneUrl], { cwd: dir });
  await git(["config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"], { cwd: dir });
}
