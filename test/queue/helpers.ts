import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StoryJob } from "../../src/queue/index.js";
import { storyKey } from "../../src/story-key/index.js";

/** A temp folder removed by the returned function. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A start job for issue `issue` of acme/widgets (installation 1 unless told). */
export function makeJob(issue: number, deliveryId = `delivery-${issue}`, options: { installationId?: number; kind?: StoryJob["kind"] } = {}): StoryJob {
  return {
    storyKey: storyKey("acme", "widgets", issue),
    kind: options.kind ?? "start",
    installationId: options.installationId ?? 1,
    repository: { id: 7, owner: "acme", name: "widgets", cloneUrl: "http://127.0.0.1:1/acme/widgets.git", defaultBranch: "main" },
    issue: { number: issue, title: `Story ${issue}`, body: "body" },
    requestedBy: "octocat",
    deliveryId,
    enqueuedAt: new Date().toISOString(),
  };
}

export function fileExists(path: string): boolean {
  return existsSync(path);
}

/** A promise with its resolver, for workers the test releases. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** How long a BullMQ test waits for one step before it fails it: a hang guard, generous for a loaded machine. */
export const GUARD_MS = 20_000;

/** `work`, or a failure naming `what` when it has not settled within `guardMs` (a hang guard, never a budget). */
export async function within<T>(what: string, work: Promise<T>, guardMs = GUARD_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${guardMs / 1000} s`)), guardMs);
  });
  try {
    return await Promise.race([work, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Cleanups run after each test of the file, the last added first, each within the hang guard, so a
 * test that failed halfway leaves no worker, connection or server. All of them run; the first
 * failure is then the hook's.
 */
export function cleanupAfterEach(): (...cleanups: Array<() => unknown>) => void {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    const failures: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) {
      await within("a cleanup", Promise.resolve().then(cleanup)).catch((error: unknown) => failures.push(error));
    }
    if (failures.length > 0) throw failures[0];
  });
  return (...added) => {
    cleanups.push(...added);
  };
}
