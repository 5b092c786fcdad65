import { realpathSync } from "node:fs";

/**
 * Serialises git work that changes one repository's shared state (its worktree list, a fetch)
 * within this process. Git does not guard `.git/worktrees` against concurrent `worktree
 * add`/`remove`/`prune` (two at once can fail with "failed to read
 * .git/worktrees/<name>/commondir"), and the App runs several stories of one repository at
 * once when `HARNESS_CONCURRENCY` allows it. Not reentrant: work holding a repository's lock
 * must not ask for it again.
 */
export class RepoLocks {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `work` after every earlier holder of `repoDir`'s lock has finished. */
  async with<T>(repoDir: string, work: () => Promise<T>): Promise<T> {
    const key = canonical(repoDir);
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

function canonical(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/** The process's lock table: a lock is only a lock if every caller shares it. */
export const repositoryLocks = new RepoLocks();
