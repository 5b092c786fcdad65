/**
 * The edges of the triggers after the pull request: how the App tells its own suites from
 * another App's, which pull request of a suite is the story's, replays, a review without a
 * user, a fork's look-alike branch, and a queue that will not take a second run of the story.
 */
import { beforeAll, describe, expect, it } from "@jest/globals";
import { handleCheckSuite, handlePullRequestReview, type TriggerDeps } from "../../src/github/triggers/index.js";
import { checkSuiteCompletedPayload, pullRequestReviewSubmittedPayload } from "../support/fake-github/index.js";
import type { ForeignRunSpec, ReviewSpec } from "../support/fake-github/review-control.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { contextFor, NAME, openStoryPull, OWNER, pushStoryBranch, useTriggerSetup } from "./fake-setup.js";

const gh = useFakeGitHub();
const setup = useTriggerSetup(gh, { prefix: "harness-revision-edges-", permissions: { writer: "write" }, bots: ["helper[bot]"] });
let story: { number: number; headSha: string };
let storyIssue: number;

beforeAll(async () => {
  storyIssue = gh.createIssue(OWNER, NAME, { title: "Greet", body: "Add greet()", user: OWNER, labels: ["story"] }).number;
  story = await openStoryPull(gh, setup.octokit, storyIssue);
});

type SuiteApp = { id?: number; slug?: string } | null;
type SuitePull = { number: number; head: { ref: string; sha: string; repo: { id: number } | null } };

/** Another App's completed suite on the story's head, as delivered; `edit` changes the payload as GitHub might send it. */
async function suiteDelivery(options: { app?: string; runs?: ForeignRunSpec[]; conclusion?: string; edit?: (payload: Record<string, unknown>) => void } = {}) {
  const { suite } = gh.addCheckSuite(OWNER, NAME, {
    app: options.app ?? "other-ci",
    headSha: story.headSha,
    headBranch: `harness/story-${storyIssue}`,
    conclusion: options.conclusion ?? "failure",
    runs: options.runs ?? [{ name: "test", conclusion: "failure", summary: "1 failed" }],
  });
  const payload = await checkSuiteCompletedPayload(gh, { owner: OWNER, name: NAME, suite });
  options.edit?.(payload);
  return contextFor("check_suite.completed", payload, setup.octokit);
}

const suiteOf = (payload: Record<string, unknown>) => payload.check_suite as { app: SuiteApp; pull_requests: SuitePull[] };

describe("check_suite.completed: whose suite it is", () => {
  it("acts on nothing until the App knows who it is, and needs only its id or its slug to know its own suites", async () => {
    const anonymous: TriggerDeps = { ...setup.deps, appId: undefined, appSlug: undefined };
    expect(await handleCheckSuite(await suiteDelivery(), anonymous)).toEqual({ action: "ignored", reason: "own-identity-unknown" });
    const byIdOnly: TriggerDeps = { ...setup.deps, appSlug: undefined };
    const bySlugOnly: TriggerDeps = { ...setup.deps, appId: undefined };
    const ownById = (payload: Record<string, unknown>) => void (suiteOf(payload).app = { id: gh.appId, slug: "renamed" });
    const ownBySlug = (payload: Record<string, unknown>) => void (suiteOf(payload).app = { id: 1, slug: gh.appSlug });
    expect(await handleCheckSuite(await suiteDelivery({ edit: ownById }), byIdOnly)).toEqual({ action: "ignored", reason: "own-suite" });
    expect(await handleCheckSuite(await suiteDelivery({ edit: ownById }), setup.deps)).toEqual({ action: "ignored", reason: "own-suite" });
    expect(await handleCheckSuite(await suiteDelivery({ edit: ownBySlug }), bySlugOnly)).toEqual({ action: "ignored", reason: "own-suite" });
    expect(await handleCheckSuite(await suiteDelivery({ edit: ownBySlug }), setup.deps)).toEqual({ action: "ignored", reason: "own-suite" });
    // A suite whose App GitHub does not say is not known to be another App's.
    const noApp = (payload: Record<string, unknown>) => void (suiteOf(payload).app = null);
    expect(await handleCheckSuite(await suiteDelivery({ edit: noApp }), setup.deps)).toEqual({ action: "ignored", reason: "own-suite" });
    expect(await setup.queue.snapshot()).toEqual([]);
  });

  it("takes another App's suite with only the App's id, or only its slug, known; names that App's bot, or `ci[bot]` for one without a slug", async () => {
    const byIdOnly = await handleCheckSuite(await suiteDelivery({ app: "other-ci" }), { ...setup.deps, appSlug: undefined });
    expect(byIdOnly).toMatchObject({ action: "enqueued", job: { kind: "revise", requestedBy: "other-ci[bot]", pullNumber: story.number } });
    // An App GitHub names by only one of the two is not taken for the App by the one it lacks.
    const noIdOrSlug = (app: SuiteApp) => (payload: Record<string, unknown>) => void (suiteOf(payload).app = app);
    expect(await handleCheckSuite(await suiteDelivery({ edit: noIdOrSlug({ slug: "slug-only-ci" }) }), { ...setup.deps, appId: undefined })).toMatchObject({
      action: "enqueued",
    });
    expect(await handleCheckSuite(await suiteDelivery({ edit: noIdOrSlug({ id: 4343 }) }), { ...setup.deps, appSlug: undefined })).toMatchObject({
      action: "enqueued",
    });
    const noSlug = (payload: Record<string, unknown>) => void (suiteOf(payload).app = { id: 4242 });
    const bySlugOnly = await handleCheckSuite(await suiteDelivery({ edit: noSlug }), { ...setup.deps, appId: undefined });
    expect(bySlugOnly).toMatchObject({ action: "enqueued", job: { requestedBy: "ci[bot]", revision: { triggers: [{ kind: "ci", app: "ci" }] } } });
  });
});

describe("check_suite.completed: which pull request, and whether anything failed", () => {
  it("finds the story's pull request among the suite's, and asks GitHub whether it is still the story's and open", async () => {
    const lookalike = (number: number): SuitePull => ({
      number,
      head: { ref: `harness/story-${storyIssue}`, sha: story.headSha, repo: { id: gh.state.repo(OWNER, NAME)?.id ?? 0 } },
    });
    const featureSha = await pushStoryBranch(gh, 777);
    await setup.octokit.rest.git.createRef({ owner: OWNER, repo: NAME, ref: "refs/heads/feature", sha: featureSha });
    const { data: plain } = await setup.octokit.rest.pulls.create({ owner: OWNER, repo: NAME, head: "feature", base: "main", title: "A feature" });
    // The payload says the plain pull request heads a story branch; GitHub's current answer says it does not.
    const stale = (payload: Record<string, unknown>) => void (suiteOf(payload).pull_requests = [lookalike(plain.number)]);
    expect(await handleCheckSuite(await suiteDelivery({ edit: stale }), setup.deps)).toEqual({ action: "ignored", reason: "no-story-pull-request" });
    // A fork's branch of the same name comes first: the repository's own is the one taken.
    const forkFirst = (payload: Record<string, unknown>) => {
      const pulls = suiteOf(payload).pull_requests;
      pulls.unshift({ ...lookalike(plain.number), head: { ...lookalike(plain.number).head, repo: { id: 99_999 } } });
    };
    expect(await handleCheckSuite(await suiteDelivery({ edit: forkFirst }), setup.deps)).toMatchObject({
      action: "enqueued",
      job: { pullNumber: story.number },
    });
  });

  it("ignores a suite on a story pull request closed since, one that reported no failing run, and one without an installation", async () => {
    const noInstallation = (payload: Record<string, unknown>) => void delete payload.installation;
    expect(await handleCheckSuite(await suiteDelivery({ edit: noInstallation }), setup.deps)).toEqual({ action: "ignored", reason: "no-installation" });
    const unconcluded = (payload: Record<string, unknown>) => void ((payload.check_suite as { conclusion: string | null }).conclusion = null);
    expect(await handleCheckSuite(await suiteDelivery({ edit: unconcluded }), setup.deps)).toEqual({ action: "ignored", reason: "not-failing" });
    const cancelled = await suiteDelivery({ runs: [{ name: "test", conclusion: "cancelled" }] });
    expect(await handleCheckSuite(cancelled, setup.deps)).toEqual({ action: "ignored", reason: "no-failing-run" });
    const delivery = await suiteDelivery();
    await setup.octokit.rest.pulls.update({ owner: OWNER, repo: NAME, pull_number: story.number, state: "closed" });
    try {
      expect(await handleCheckSuite(delivery, setup.deps)).toEqual({ action: "ignored", reason: "pull-request-closed" });
    } finally {
      await setup.octokit.rest.pulls.update({ owner: OWNER, repo: NAME, pull_number: story.number, state: "open" });
    }
    expect(await setup.queue.snapshot()).toEqual([]);
  });
});

describe("pull_request_review.submitted: edges", () => {
  async function reviewDelivery(edit?: (payload: Record<string, unknown>) => void, spec: Partial<ReviewSpec> = {}) {
    const { review } = gh.submitReview(OWNER, NAME, story.number, {
      user: "writer",
      state: "CHANGES_REQUESTED",
      body: "Rename it.",
      commitId: story.headSha,
      ...spec,
    });
    const payload = await pullRequestReviewSubmittedPayload(gh, { owner: OWNER, name: NAME, review });
    edit?.(payload);
    return contextFor("pull_request_review.submitted", payload, setup.octokit);
  }

  it("queues one run, with no reply, and a replay of the same review under a new delivery id starts nothing", async () => {
    const delivery = await reviewDelivery();
    const before = setup.commentsOn(story.number).length;
    expect((await handlePullRequestReview(delivery, setup.deps)).action).toBe("enqueued");
    const replay = contextFor("pull_request_review.submitted", delivery.payload as unknown as Record<string, unknown>, setup.octokit);
    expect(await handlePullRequestReview(replay, setup.deps)).toEqual({ action: "ignored", reason: "duplicate-delivery" });
    expect(setup.commentsOn(story.number)).toHaveLength(before);
  });

  it("ignores a review whose author GitHub no longer has (a deleted account), and one a bot sent", async () => {
    const ghost = await reviewDelivery((payload) => void ((payload.review as { user: unknown }).user = null));
    expect(await handlePullRequestReview(ghost, setup.deps)).toEqual({ action: "ignored", reason: "bot" });
    const sentByBot = await reviewDelivery((payload) => void (payload.sender = gh.userJson("helper[bot]")));
    expect(await handlePullRequestReview(sentByBot, setup.deps)).toEqual({ action: "ignored", reason: "bot" });
    const byBot = await reviewDelivery((payload) => void (payload.sender = gh.userJson("writer")), { user: "helper[bot]" });
    expect(await handlePullRequestReview(byBot, setup.deps)).toEqual({ action: "ignored", reason: "bot" });
  });

  it("ignores a fork's pull request whose branch is named like a story's, and a delivery without an installation", async () => {
    const fork = await reviewDelivery((payload) => void ((payload.pull_request as { head: { repo: { id: number } } }).head.repo.id = 99_999));
    expect(await handlePullRequestReview(fork, setup.deps)).toEqual({ action: "ignored", reason: "not-a-story" });
    const goneFork = await reviewDelivery((payload) => void ((payload.pull_request as { head: { repo: unknown } }).head.repo = null));
    expect(await handlePullRequestReview(goneFork, setup.deps)).toEqual({ action: "ignored", reason: "not-a-story" });
    const noInstallation = await reviewDelivery((payload) => void delete payload.installation);
    expect(await handlePullRequestReview(noInstallation, setup.deps)).toEqual({ action: "ignored", reason: "no-installation" });
  });

  it("queues a comment review that has inline comments, as a review that requests changes", async () => {
    const commented = await reviewDelivery(undefined, { state: "COMMENTED", comments: [{ path: "greet.js", line: 1, body: "say hello" }] });
    expect(await handlePullRequestReview(commented, setup.deps)).toMatchObject({
      action: "enqueued",
      job: { revision: { triggers: [{ kind: "review", comments: [{ path: "greet.js", line: 1, body: "say hello" }] }] } },
    });
  });

  it("tells the pull request when the queue will not take another run of the story", async () => {
    const refusing: TriggerDeps = {
      ...setup.deps,
      queue: { enqueue: () => Promise.resolve({ accepted: false, reason: "already-active" }), isActive: () => Promise.resolve(true) },
    };
    expect(await handlePullRequestReview(await reviewDelivery(), refusing)).toEqual({ action: "replied", reason: "already-active" });
    expect(setup.commentsOn(story.number).at(-1)).toMatch(new RegExp(`#${storyIssue}`));
  });
});
