/**
 * The trigger handlers' dependencies as the GitHub room's tests build them: a real embedded
 * queue in a fresh temporary folder for every test, around the fake GitHub's App. One place for
 * what the trigger tests set up before each test and check after it.
 */
import { afterEach, beforeEach } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GitHubLog } from "../../src/github/index.js";
import type { TriggerDeps } from "../../src/github/triggers/index.js";
import { EmbeddedQueue } from "../../src/queue/index.js";
import type { FakeGitHub } from "./fake-github/index.js";

/** The current test's queue, its folder and the handlers' dependencies around it. */
export interface TriggerDepsFixture {
  readonly dir: string;
  readonly queue: EmbeddedQueue;
  readonly deps: TriggerDeps;
  /** Closes the queue, runs `between` (the App down), and opens it again in the same folder: the restarted App. */
  reopen(between?: () => void): Promise<void>;
}

/**
 * Registers, in the calling `describe` (or file), a fresh queue in a folder named `prefix…`
 * before each test, with `deps` for the App `fake()` names, a new `log()` and `options.now` (the
 * handlers' clock, when a test pins it); after each test
 * the queue is closed, its folder removed, and the fake must have had no unexpected request.
 */
export function triggerDepsEach(prefix: string, fake: () => FakeGitHub, log: () => GitHubLog, options: { now?: () => Date } = {}): TriggerDepsFixture {
  let dir = "";
  let queue: EmbeddedQueue | undefined;
  let deps: TriggerDeps | undefined;
  const opened = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the trigger dependencies exist only inside a test");
    return value;
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    queue = await EmbeddedQueue.open({ dir });
    deps = { queue, log: log(), appSlug: fake().appSlug, appId: fake().appId, ...(options.now ? { now: options.now } : {}) };
  });

  afterEach(async () => {
    await queue?.close();
    queue = undefined;
    deps = undefined;
    rmSync(dir, { recursive: true, force: true });
    fake().assertNoUnexpectedRequests();
  });

  return {
    get dir() {
      return dir;
    },
    get queue() {
      return opened(queue);
    },
    get deps() {
      return opened(deps);
    },
    async reopen(between) {
      await opened(queue).close();
      between?.();
      queue = await EmbeddedQueue.open({ dir });
      deps = { ...opened(deps), queue };
    },
  };
}
