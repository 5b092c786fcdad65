/**
 * What the runner's outbox tests share: the fake GitHub, a temporary root for the App's homes,
 * the App's outboxes opened as an App process opens them, and the failure windows and request
 * gates a test leaves behind; all closed or removed after the file's tests.
 */
import { afterAll, beforeAll } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProbotOctokit } from "probot";
import { openStoryOutbox, type AppOctokit } from "../../src/github/story/index.js";
import { type Outbox } from "../../src/outbox/index.js";
import { pushStoryWork, type RunnerLog } from "../../src/runner/index.js";
import { type FailureWindow, type FailureWindowSpec, type FakeGitHub, type RequestGate, type RequestGateSpec } from "./fake-github/index.js";
import { useFakeGitHub } from "./fake-github-fixture.js";

/** The App's octokit (JWT) on the fake; `quiet`: no retries or throttling of its own, as `harness serve` configures it. */
export function appOctokitOf(fake: FakeGitHub, options: { baseUrl?: string; quiet?: boolean } = {}): AppOctokit {
  const quiet = options.quiet ? { retry: { enabled: false }, throttle: { enabled: false } } : {};
  return new ProbotOctokit({ auth: { appId: fake.appId, privateKey: fake.privateKey }, baseUrl: options.baseUrl ?? fake.apiUrl, ...quiet }) as AppOctokit;
}

/** The App's outbox in `home`, as an App process opens it at start-up (a second one is the restarted App), retrying fast. */
export async function openTestOutbox(fake: FakeGitHub, home: string, log: RunnerLog): Promise<Outbox> {
  const octokit = appOctokitOf(fake);
  return openStoryOutbox({
    harnessHome: home,
    appOctokit: async () => octokit,
    throttle: false,
    log,
    pushWork: pushStoryWork,
    policy: { baseDelayMs: 20, maxDelayMs: 200 },
  });
}

/** The fake GitHub and the temporary root of one test file, with what its tests open on them. */
export interface OutboxFixture {
  /** Started before the file's tests. */
  readonly fake: FakeGitHub;
  /** A temporary folder for the App's homes, removed after the file's tests. */
  readonly root: string;
  /** The App's outbox in `home` (a second call on the same home is the restarted App); closed after the file's tests. */
  openOutbox(home: string): Promise<Outbox>;
  /** The fake's failure window, closed after the file's tests if the test did not. */
  injectFailure(spec: FailureWindowSpec): FailureWindow;
  /** The fake's request gate, opened after the file's tests if the test did not. */
  holdRequests(spec: RequestGateSpec): RequestGate;
}

/**
 * Registers, in the calling `describe`, the fake GitHub and a temporary root named `prefix…`
 * before its tests; after them the gates open, the windows close, the outboxes close (in that
 * order, so nothing waits on a held request), the fake is checked for requests it refused and
 * stops, and the root goes.
 */
export function outboxFixture(prefix: string, log: RunnerLog): OutboxFixture {
  let root = "";
  const outboxes: Outbox[] = [];
  const gates: RequestGate[] = [];
  const windows: FailureWindow[] = [];

  // Declared before the fake's own teardown (jest runs afterAll hooks in order): nothing waits on a held request, and
  // the outboxes close while the fake still answers.
  afterAll(async () => {
    for (const gate of gates) gate.open();
    for (const window of windows) window.close();
    for (const outbox of outboxes) await outbox.close();
  });
  const fake = useFakeGitHub();
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  return {
    get fake() {
      return fake;
    },
    get root() {
      return root;
    },
    async openOutbox(home) {
      const outbox = await openTestOutbox(fake, home, log);
      outboxes.push(outbox);
      return outbox;
    },
    injectFailure(spec) {
      const window = fake.injectFailure(spec);
      windows.push(window);
      return window;
    },
    holdRequests(spec) {
      const gate = fake.holdRequests(spec);
      gates.push(gate);
      return gate;
    },
  };
}
