/** Webhook payloads for reviews and other Apps' check suites, built from GitHub's examples and the fake's state. */
import type { FakeGitHub } from "./fake.js";
import { branchHead } from "./repos.js";
import { pullResponse } from "./routes/pulls.js";
import { checkSuiteJson, reviewJson } from "./review-shapes.js";
import type { CheckSuiteRecord, RepoRecord, ReviewRecord } from "./state.js";
import { examplePayload } from "./webhooks.js";

type Example = Record<string, unknown>;

function repoOf(gh: FakeGitHub, owner: string, name: string): RepoRecord {
  const repo = gh.state.repo(owner, name);
  if (!repo) throw new Error(`fake-github: no repository ${owner}/${name}`);
  return repo;
}

function common(gh: FakeGitHub, example: Example, repo: RepoRecord, sender: string): Example {
  const payload: Example = {
    ...example,
    repository: { ...(example.repository as Example), ...gh.repositoryJson(repo.owner, repo.name) },
    sender: gh.userJson(sender),
    installation: { id: gh.installationId, node_id: Buffer.from(`fake:installation:${gh.installationId}`).toString("base64") },
  };
  delete payload.organization;
  return payload;
}

/** `pull_request_review.submitted` for a review made with `gh.submitReview` (the sender is its author; the body only, as GitHub sends it). */
export async function pullRequestReviewSubmittedPayload(gh: FakeGitHub, args: { owner: string; name: string; review: ReviewRecord }): Promise<Example> {
  const repo = repoOf(gh, args.owner, args.name);
  const pull = gh.state.pull(repo, args.review.pullNumber);
  if (!pull) throw new Error(`fake-github: ${repo.fullName} has no pull request #${args.review.pullNumber}`);
  const example = examplePayload("pull_request_review", "submitted");
  const review = reviewJson(gh.context.urls, args.review);
  // GitHub's webhook says the state in lower case (the REST API in upper case).
  review.state = args.review.state.toLowerCase();
  return { ...common(gh, example, repo, args.review.user), review, pull_request: await pullResponse(gh.context, repo, pull) };
}

/**
 * `check_suite.completed` for a suite made with `gh.addCheckSuite`. `pull_requests` lists the open
 * pull requests whose head is the suite's commit (empty for a suite on a commit no pull request heads);
 * the sender is whoever pushed (`sender`, by default the App's bot, as when the App pushed the commit).
 */
export async function checkSuiteCompletedPayload(
  gh: FakeGitHub,
  args: { owner: string; name: string; suite: CheckSuiteRecord; sender?: string },
): Promise<Example> {
  const repo = repoOf(gh, args.owner, args.name);
  const pullRequests: Example[] = [];
  for (const pull of gh.state.pulls.filter((candidate) => candidate.repo === repo.fullName && candidate.state === "open")) {
    const head = await branchHead(repo.bareDir, pull.headRef);
    if (head !== args.suite.headSha) continue;
    const base = await branchHead(repo.bareDir, pull.baseRef);
    const side = (ref: string, sha: string | null): Example => ({
      ref,
      sha,
      repo: { id: repo.id, url: `${gh.apiUrl}/repos/${repo.fullName}`, name: repo.name },
    });
    pullRequests.push({
      url: `${gh.apiUrl}/repos/${repo.fullName}/pulls/${pull.number}`,
      id: pull.id,
      number: pull.number,
      head: side(pull.headRef, head),
      base: side(pull.baseRef, base),
    });
  }
  const runs = gh.state.checkRuns.filter((run) => run.suiteId === args.suite.id).length;
  const example = examplePayload("check_suite", "completed");
  return { ...common(gh, example, repo, args.sender ?? gh.botLogin), check_suite: checkSuiteJson(gh.context.urls, repo, args.suite, pullRequests, runs) };
}
