import { createHmac, randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import type { FakeGitHub } from "./fake.js";
import { branchHead } from "./repos.js";
import { issueResponse } from "./routes/issues.js";
import { checkRunJson, commentJson, labelJson } from "./shapes.js";
import type { CommentRecord, RepoRecord } from "./state.js";

/** A webhook delivery ready to POST: GitHub's headers and the exact body they sign. */
export interface SignedDelivery {
  id: string;
  headers: Record<string, string>;
  body: string;
}

/** Signs `payload` as GitHub does (`X-Hub-Signature-256` = HMAC-SHA256 of the body with the secret). */
export function signedDelivery(event: string, payload: unknown, secret: string, id: string = randomUUID()): SignedDelivery {
  const body = JSON.stringify(payload);
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  return {
    id,
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/fake",
      "x-github-event": event,
      "x-github-delivery": id,
      "x-hub-signature-256": signature,
    },
  };
}

/** POSTs a delivery to the App's webhook URL; resolves with GitHub's view of the answer. */
export async function deliverWebhook(webhookUrl: string, delivery: SignedDelivery): Promise<{ status: number; body: string; durationMs: number }> {
  const started = performance.now();
  const response = await fetch(webhookUrl, { method: "POST", headers: delivery.headers, body: delivery.body });
  const body = await response.text();
  return { status: response.status, body, durationMs: performance.now() - started };
}

type Example = Record<string, unknown>;
let examples: { name: string; examples: Example[] }[] | undefined;

/** One example payload from `@octokit/webhooks-examples` (deep-copied), preferring one with an installation. */
export function examplePayload(event: string, action: string): Example {
  examples ??= createRequire(import.meta.url)("@octokit/webhooks-examples") as { name: string; examples: Example[] }[];
  const candidates = examples.find((definition) => definition.name === event)?.examples.filter((example) => example.action === action) ?? [];
  const example = candidates.find((candidate) => candidate.installation) ?? candidates[0];
  if (!example) throw new Error(`fake-github: @octokit/webhooks-examples has no ${event}.${action} example`);
  return structuredClone(example);
}

function repoOf(gh: FakeGitHub, owner: string, name: string): RepoRecord {
  const repo = gh.state.repo(owner, name);
  if (!repo) throw new Error(`fake-github: no repository ${owner}/${name}`);
  return repo;
}

/** The parts every payload shares, rewritten to the fake: repository, sender, installation, no organization. */
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

/** `issues.labeled` for an issue of the fake, `sender` having added `label` (added to the issue if missing). */
export function issuesLabeledPayload(gh: FakeGitHub, args: { owner: string; name: string; number: number; label: string; sender: string }): Example {
  const repo = repoOf(gh, args.owner, args.name);
  gh.addLabel(args.owner, args.name, args.number, args.label);
  const issue = gh.state.issue(repo, args.number);
  const label = gh.state.label(repo, args.label);
  if (!issue || !label) throw new Error(`fake-github: ${repo.fullName}#${args.number} does not exist`);
  const example = examplePayload("issues", "labeled");
  return {
    ...common(gh, example, repo, args.sender),
    issue: { ...(example.issue as Example), ...issueResponse(gh.context, repo, issue) },
    label: labelJson(gh.context.urls, label),
  };
}

/** `issue_comment.created` for a comment made with `gh.addComment` (the sender is its author). */
export function issueCommentCreatedPayload(gh: FakeGitHub, args: { owner: string; name: string; comment: CommentRecord }): Example {
  const repo = repoOf(gh, args.owner, args.name);
  const issue = gh.state.issue(repo, args.comment.issueNumber);
  if (!issue) throw new Error(`fake-github: ${repo.fullName}#${args.comment.issueNumber} does not exist`);
  const example = examplePayload("issue_comment", "created");
  return {
    ...common(gh, example, repo, args.comment.user),
    issue: { ...(example.issue as Example), ...issueResponse(gh.context, repo, issue) },
    comment: { ...(example.comment as Example), ...commentJson(gh.context.urls, args.comment), performed_via_github_app: null },
  };
}

/** `check_run.requested_action`: `sender` pressed the button `identifier` on a check run of the fake. */
export async function checkRunRequestedActionPayload(
  gh: FakeGitHub,
  args: { owner: string; name: string; checkRunId: number; identifier: string; sender: string },
): Promise<Example> {
  const repo = repoOf(gh, args.owner, args.name);
  const run = gh.state.checkRuns.find((candidate) => candidate.repo === repo.fullName && candidate.id === args.checkRunId);
  if (!run) throw new Error(`fake-github: no check run ${args.checkRunId} in ${repo.fullName}`);
  const pullRequests: Example[] = [];
  for (const pull of gh.state.pulls.filter((candidate) => candidate.repo === repo.fullName && candidate.state === "open")) {
    const head = await branchHead(repo.bareDir, pull.headRef);
    if (head !== run.headSha) continue;
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
  const example = examplePayload("check_run", "requested_action");
  const checkRun = checkRunJson(gh.context.urls, run, gh.appJson());
  const exampleSuite = (example.check_run as Example | undefined)?.check_suite as Example | undefined;
  checkRun.pull_requests = pullRequests;
  checkRun.check_suite = {
    ...exampleSuite,
    id: run.id + 1,
    head_sha: run.headSha,
    head_branch: pullRequests[0]?.head ? (pullRequests[0].head as Example).ref : null,
    pull_requests: pullRequests,
    app: gh.appJson(),
  };
  return { ...common(gh, example, repo, args.sender), check_run: checkRun, requested_action: { identifier: args.identifier } };
}
