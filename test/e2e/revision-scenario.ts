/**
 * The setup the revision end-to-end files share: the running App against the strict fake GitHub,
 * a scripted agent that does what the reviser prompt names, and the steps a test takes after the
 * story's pull request opens (a review, another App's failing suite, waiting for the next head).
 * Jest's hooks: call {@link useRevisionApp} at the top of a file's `describe`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import {
  checkSuiteCompletedPayload,
  deliverWebhook,
  pullRequestReviewSubmittedPayload,
  signedDelivery,
  type FakeGitHub,
  type ForeignRunSpec,
  type PullRecord,
} from "../support/fake-github/index.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { eventually } from "../support/poll.js";
import { startApp, type RunningApp } from "./app-process.js";
import { AGENT_SCRIPT, checksOn, harnessYml, labelNewIssue, loggedDelivery, OWNER, reportsDelivered, STATUS_MARKER, storyEnd, storyPull } from "./scenario.js";

/**
 * The scripted agent of the other scenarios, whose implementer, on a revision, also creates each
 * file the prompt names on a `NEEDS: <file>` line and replies on each review comment it was shown.
 * Given a markers folder, a revision whose prompt says `HOLD-ROUND` (the first one only) writes
 * `held` there and waits for `go`, so a test can deliver triggers while a round runs.
 */
export const REVISING_AGENT = AGENT_SCRIPT.replace(
  "    echo hello > feature.txt ;;",
  [
    "    echo hello > feature.txt",
    '    if grep -q "^# Reviser" "$HARNESS_PROMPT_FILE"; then',
    '      if [ -n "$markers" ] && grep -q HOLD-ROUND "$HARNESS_PROMPT_FILE" && [ ! -f "$markers/held" ]; then',
    '        : > "$markers/held"; i=0',
    '        while [ ! -f "$markers/go" ] && [ $i -lt 1800 ]; do sleep 0.1; i=$((i+1)); done',
    "      fi",
    "      for f in $(grep -o 'NEEDS: [a-z.-]*' \"$HARNESS_PROMPT_FILE\" | cut -d' ' -f2); do echo fixed > \"$f\"; done",
    "      ids=$(grep -o 'Comment [0-9]*' \"$HARNESS_PROMPT_FILE\" | cut -d' ' -f2)",
    "      sep=''; printf '{' > \"$HARNESS_ARTIFACT_DIR/replies.json\"",
    '      for id in $ids; do printf \'%s"%s":"made the file asked for"\' "$sep" "$id" >> "$HARNESS_ARTIFACT_DIR/replies.json"; sep=\',\'; done',
    "      echo '}' >> \"$HARNESS_ARTIFACT_DIR/replies.json\"",
    "    fi ;;",
  ].join("\n"),
);

/** Adds a repository with the revising agent; `markers` is the folder it waits in (its first implementer does not wait: `started` is there). */
export async function addRevisingRepo(fake: FakeGitHub, name: string, options: { extraConfig?: string; markers?: string } = {}): Promise<void> {
  const config = harnessYml(options.markers ? { markers: options.markers } : {}) + (options.extraConfig ?? "");
  await fake.addRepository({
    owner: OWNER,
    name,
    files: { "README.md": `# ${name}\n`, ".harness-test/agent.sh": REVISING_AGENT, ".github/harness.yml": config },
  });
}

export interface RevisionScenario {
  fake: FakeGitHub;
  app: () => RunningApp;
  root: () => string;
  home: () => string;
  /** Labels a new issue and waits for its story to end with its pull request ready; returns the pull request and head. */
  completedStory: (name: string) => Promise<{ issue: number; pull: PullRecord; head: string }>;
  /** Waits for the story branch to move past `from` and for the story check run on the new head to complete. */
  nextHead: (name: string, issue: number, from: string) => Promise<string>;
  /** Submits a review on the fake and delivers it; returns the review, its comments and the App's logged outcome. */
  review: (
    name: string,
    pull: PullRecord,
    user: string,
    head: string,
    comments: { path: string; line: number | null; body: string }[],
    body?: string,
  ) => Promise<ReturnType<FakeGitHub["submitReview"]> & { outcome: Record<string, unknown> }>;
  /** Adds another App's failing check suite and delivers it; returns the App's logged outcome. */
  suite: (name: string, spec: { app: string; appId?: number; headSha: string; runs: ForeignRunSpec[] }) => Promise<Record<string, unknown>>;
  statusComment: (name: string, pullNumber: number) => string;
  /** The text of `path` at commit `sha` of the fake's repository, undefined when it has none. */
  fileAt: (name: string, sha: string, path: string) => Promise<string | undefined>;
  isAncestor: (name: string, older: string, newer: string) => Promise<boolean>;
}

/**
 * Starts the App for the file (before its first test) against the file's fake, and stops it after.
 * `env` is given the file's temporary folder and returns the App's extra environment.
 */
export function useRevisionApp(options: { label: string; env?: (root: string) => Record<string, string> }): RevisionScenario {
  let app: RunningApp | undefined;
  let root = "";

  // Declared before the fake's teardown: the App stops while the fake still answers.
  afterAll(async () => {
    await app?.stop();
    if (process.env.HARNESS_E2E_KEEP) process.stderr.write(`kept ${root}\n`);
    else if (root) rmSync(root, { recursive: true, force: true });
  });

  const fake = useFakeGitHub();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `harness-e2e-${options.label}-`));
    app = await startApp({ fake, home: join(root, "home"), workDir: root, ...(options.env ? { env: options.env(root) } : {}) });
  });

  const running = (): RunningApp => {
    if (!app) throw new Error("useRevisionApp: the App is not running (used outside the file's tests?)");
    return app;
  };
  const home = (): string => join(root, "home");

  return {
    fake,
    app: running,
    root: () => root,
    home,
    async completedStory(name) {
      const { number } = await labelNewIssue(fake, running(), name, `Story of ${name}`);
      const { head, story } = await storyEnd(fake, name, number);
      expect(story.conclusion).toBe("success");
      await reportsDelivered(home());
      const pull = storyPull(fake, name, number);
      expect(pull).toBeDefined();
      return { issue: number, pull: pull!, head };
    },
    async nextHead(name, issue, from) {
      const head = await eventually(
        `${name}#${issue} to get a verified commit after ${from.slice(0, 8)}`,
        async () => {
          const now = await fake.branchHead(OWNER, name, `harness/story-${issue}`);
          if (!now || now === from) return undefined;
          return checksOn(fake, name, now).get("harness / story")?.status === "completed" ? now : undefined;
        },
        180_000,
      );
      await reportsDelivered(home());
      return head;
    },
    async review(name, pull, user, head, comments, body = "Please change this.") {
      const submitted = fake.submitReview(OWNER, name, pull.number, { user, state: "CHANGES_REQUESTED", body, commitId: head, comments });
      const payload = await pullRequestReviewSubmittedPayload(fake, { owner: OWNER, name, review: submitted.review });
      const delivery = signedDelivery("pull_request_review", payload, fake.webhookSecret);
      expect((await deliverWebhook(running().webhookUrl, delivery)).status).toBe(200);
      return { ...submitted, outcome: await loggedDelivery(running(), delivery.id) };
    },
    async suite(name, spec) {
      const { suite: record } = fake.addCheckSuite(OWNER, name, { ...spec, headBranch: null, conclusion: "failure" });
      const payload = await checkSuiteCompletedPayload(fake, { owner: OWNER, name, suite: record });
      const delivery = signedDelivery("check_suite", payload, fake.webhookSecret);
      expect((await deliverWebhook(running().webhookUrl, delivery)).status).toBe(200);
      return loggedDelivery(running(), delivery.id);
    },
    statusComment(name, pullNumber) {
      const found = fake.state.comments.find(
        (comment) => comment.repo === `${OWNER}/${name}` && comment.issueNumber === pullNumber && comment.body.includes(STATUS_MARKER),
      );
      return found?.body ?? "";
    },
    async fileAt(name, sha, path) {
      const result = await exec(["git", "show", `${sha}:${path}`], { cwd: fake.state.repo(OWNER, name)!.bareDir, captureStdout: true });
      return result.exitCode === 0 ? result.stdout?.toString("utf8") : undefined;
    },
    async isAncestor(name, older, newer) {
      const result = await exec(["git", "merge-base", "--is-ancestor", older, newer], { cwd: fake.state.repo(OWNER, name)!.bareDir });
      return result.exitCode === 0;
    },
  };
}
