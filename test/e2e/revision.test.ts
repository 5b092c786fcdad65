/**
 * End to end: after the story's pull request opens, a writer's review and another App's failing
 * CI start revision rounds through the running App, against the strict fake GitHub, with a
 * scripted agent that does what the reviser prompt names (`NEEDS: <file>` lines).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jest } from "@jest/globals";
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
import {
  AGENT_SCRIPT,
  CHECK_NAMES,
  checksOn,
  harnessYml,
  labelNewIssue,
  loggedDelivery,
  OWNER,
  reportsDelivered,
  STATUS_MARKER,
  storyEnd,
  storyPull,
} from "./scenario.js";

jest.setTimeout(300_000);

/**
 * The scripted agent of the other scenarios, whose implementer, on a revision, also creates each
 * file the prompt names on a `NEEDS: <file>` line and replies on each review comment it was shown.
 */
const REVISING_AGENT = AGENT_SCRIPT.replace(
  "    echo hello > feature.txt ;;",
  [
    "    echo hello > feature.txt",
    '    if grep -q "^# Reviser" "$HARNESS_PROMPT_FILE"; then',
    "      for f in $(grep -o 'NEEDS: [a-z.-]*' \"$HARNESS_PROMPT_FILE\" | cut -d' ' -f2); do echo fixed > \"$f\"; done",
    "      ids=$(grep -o 'Comment [0-9]*' \"$HARNESS_PROMPT_FILE\" | cut -d' ' -f2)",
    "      sep=''; printf '{' > \"$HARNESS_ARTIFACT_DIR/replies.json\"",
    '      for id in $ids; do printf \'%s"%s":"made the file asked for"\' "$sep" "$id" >> "$HARNESS_ARTIFACT_DIR/replies.json"; sep=\',\'; done',
    "      echo '}' >> \"$HARNESS_ARTIFACT_DIR/replies.json\"",
    "    fi ;;",
  ].join("\n"),
);

async function addRevisingRepo(fake: FakeGitHub, name: string, extraConfig = ""): Promise<void> {
  await fake.addRepository({
    owner: OWNER,
    name,
    files: { "README.md": `# ${name}\n`, ".harness-test/agent.sh": REVISING_AGENT, ".github/harness.yml": harnessYml() + extraConfig },
  });
}

describe("revision rounds end to end", () => {
  let app: RunningApp;
  let root: string;

  // Declared before the fake's teardown: the App stops while the fake still answers.
  afterAll(async () => {
    await app?.stop();
    if (process.env.HARNESS_E2E_KEEP) process.stderr.write(`kept ${root}\n`);
    else rmSync(root, { recursive: true, force: true });
  });

  const fake = useFakeGitHub();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-e2e-revision-"));
    app = await startApp({ fake, home: join(root, "home"), workDir: root });
  });

  const home = (): string => join(root, "home");

  /** Labels a new issue and waits for its story to end with its pull request ready; returns the pull request and head. */
  async function completedStory(name: string): Promise<{ issue: number; pull: PullRecord; head: string }> {
    const { number } = await labelNewIssue(fake, app, name, `Story of ${name}`);
    const { head, story } = await storyEnd(fake, name, number);
    expect(story.conclusion).toBe("success");
    await reportsDelivered(home());
    const pull = storyPull(fake, name, number);
    expect(pull).toBeDefined();
    return { issue: number, pull: pull!, head };
  }

  /** Waits for the story branch to move past `from` and for the story check run on the new head to complete. */
  async function nextHead(name: string, issue: number, from: string): Promise<string> {
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
  }

  async function review(name: string, pull: PullRecord, user: string, head: string, comments: { path: string; line: number | null; body: string }[]) {
    const submitted = fake.submitReview(OWNER, name, pull.number, { user, state: "CHANGES_REQUESTED", body: "Please change this.", commitId: head, comments });
    const payload = await pullRequestReviewSubmittedPayload(fake, { owner: OWNER, name, review: submitted.review });
    const delivery = signedDelivery("pull_request_review", payload, fake.webhookSecret);
    expect((await deliverWebhook(app.webhookUrl, delivery)).status).toBe(200);
    return { ...submitted, outcome: await loggedDelivery(app, delivery.id) };
  }

  async function suite(name: string, spec: { app: string; appId?: number; headSha: string; runs: ForeignRunSpec[] }) {
    const { suite: record } = fake.addCheckSuite(OWNER, name, { ...spec, headBranch: null, conclusion: "failure" });
    const payload = await checkSuiteCompletedPayload(fake, { owner: OWNER, name, suite: record });
    const delivery = signedDelivery("check_suite", payload, fake.webhookSecret);
    expect((await deliverWebhook(app.webhookUrl, delivery)).status).toBe(200);
    return loggedDelivery(app, delivery.id);
  }

  function statusComment(name: string, pullNumber: number): string {
    const found = fake.state.comments.find(
      (comment) => comment.repo === `${OWNER}/${name}` && comment.issueNumber === pullNumber && comment.body.includes(STATUS_MARKER),
    );
    return found?.body ?? "";
  }

  /** The text of `path` at commit `sha` of the fake's repository, undefined when it has none. */
  async function fileAt(name: string, sha: string, path: string): Promise<string | undefined> {
    const result = await exec(["git", "show", `${sha}:${path}`], { cwd: fake.state.repo(OWNER, name)!.bareDir, captureStdout: true });
    return result.exitCode === 0 ? result.stdout?.toString("utf8") : undefined;
  }

  async function isAncestor(name: string, older: string, newer: string): Promise<boolean> {
    const bare = fake.state.repo(OWNER, name)!.bareDir;
    const result = await exec(["git", "merge-base", "--is-ancestor", older, newer], { cwd: bare });
    return result.exitCode === 0;
  }

  it("a writer's review with an inline comment → a verified revision commit on the same branch, a thread reply, round 1 in the Revisions table; a reader's review does nothing; an Actions failure whose log names the problem → a fix commit; stale and own suites are ignored", async () => {
    const name = "revised";
    await addRevisingRepo(fake, name);
    const { issue, pull, head: first } = await completedStory(name);

    // (b) A reader's review starts nothing and gets no reply.
    fake.setPermission(OWNER, name, "reader", "read");
    const readers = await review(name, pull, "reader", first, [{ path: "feature.txt", line: 1, body: "NEEDS: reader.txt" }]);
    expect(readers.outcome).toMatchObject({ action: "ignored", reason: "not-permitted" });

    // (a) A writer's review with an inline comment.
    fake.setPermission(OWNER, name, "writer", "write");
    const writers = await review(name, pull, "writer", first, [{ path: "feature.txt", line: 1, body: "Also add it. NEEDS: polite.txt" }]);
    expect(writers.outcome).toMatchObject({ action: "enqueued" });
    const second = await nextHead(name, issue, first);
    expect(await isAncestor(name, first, second)).toBe(true);
    expect(await fileAt(name, second, "polite.txt")).toBe("fixed\n");
    expect(await fileAt(name, second, "reader.txt")).toBeUndefined();
    const checks = checksOn(fake, name, second);
    for (const check of CHECK_NAMES) expect([check, checks.get(check)?.conclusion]).toEqual([check, "success"]);
    const reply = fake.state.reviewComments.find((comment) => comment.inReplyTo === writers.comments[0]!.id);
    expect(reply?.user).toBe(fake.botLogin);
    expect(reply?.body).toContain("made the file asked for");
    expect(fake.state.reviewComments.some((comment) => comment.inReplyTo === readers.comments[0]!.id)).toBe(false);
    expect(statusComment(name, pull.number)).toMatch(/### Revisions[\s\S]*\| 1 \| review by @\u200B?writer \| verified \|/);
    expect(storyPull(fake, name, issue)?.state).toBe("open");

    // (e) The App's own suite, and a failing suite on the head the story has left, start nothing.
    const own = await suite(name, { app: fake.appSlug, appId: fake.appId, headSha: second, runs: [{ name: "harness / story", conclusion: "failure" }] });
    expect(own).toMatchObject({ action: "ignored", reason: "own-suite" });
    const stale = await suite(name, {
      app: "github-actions",
      headSha: first,
      runs: [{ name: "build", conclusion: "failure", log: "error: NEEDS: stale.txt\n" }],
    });
    expect(stale).toMatchObject({ action: "ignored" });
    expect(["no-story-pull-request", "stale-head"]).toContain(stale.reason);

    // (c) GitHub Actions fails on the head, its job log naming the problem: a fix commit.
    const failing = await suite(name, {
      app: "github-actions",
      headSha: second,
      runs: [
        {
          name: "lint",
          conclusion: "failure",
          summary: "lint failed",
          log: "\u001b[31m2026-01-01T00:00:00Z error: lint.txt is missing (NEEDS: lint.txt)\u001b[0m\n",
        },
      ],
    });
    expect(failing).toMatchObject({ action: "enqueued" });
    const third = await nextHead(name, issue, second);
    expect(await isAncestor(name, second, third)).toBe(true);
    expect(await fileAt(name, third, "lint.txt")).toBe("fixed\n");
    expect(await fileAt(name, third, "stale.txt")).toBeUndefined();
    expect(checksOn(fake, name, third).get("harness / story")?.conclusion).toBe("success");
    expect(statusComment(name, pull.number)).toMatch(/\| 2 \| CI: github-actions \\?\(lint\\?\) \| verified \|/);
  });

  it("iterate.max_rounds: 1 → a second trigger starts nothing and the status comment says iterate.max_rounds is spent", async () => {
    const name = "bounded";
    await addRevisingRepo(fake, name, "iterate:\n  max_rounds: 1\n");
    const { issue, pull, head: first } = await completedStory(name);
    fake.setPermission(OWNER, name, "writer", "write");
    await review(name, pull, "writer", first, [{ path: "feature.txt", line: 1, body: "NEEDS: one.txt" }]);
    const second = await nextHead(name, issue, first);

    const again = await review(name, pull, "writer", second, [{ path: "feature.txt", line: 1, body: "NEEDS: two.txt" }]);
    expect(again.outcome).toMatchObject({ action: "enqueued" });
    await eventually("the status comment to say the rounds are spent", () =>
      statusComment(name, pull.number).includes("`iterate.max_rounds` is spent") ? true : undefined,
    );
    await reportsDelivered(home());
    expect(await fake.branchHead(OWNER, name, `harness/story-${issue}`)).toBe(second);
    expect(statusComment(name, pull.number)).toMatch(/\| 1 \| review by @\u200B?writer \| verified \|/);
    expect(statusComment(name, pull.number)).not.toMatch(/\| 2 \|/);
  });
});
