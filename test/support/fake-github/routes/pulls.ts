import { bodyObject, HttpError, intParam, paginate, requireRepo, type FakeContext, type RouteRequest } from "../http.js";
import { branchHead, commitsAhead } from "../repos.js";
import { pullJson } from "../pull-shape.js";
import { nodeId, timestamp, type PullRecord, type RepoRecord } from "../state.js";
import type { Route } from "./types.js";

/** A pull request as GitHub returns it, its shas read live from the bare repository. */
export async function pullResponse(ctx: FakeContext, repo: RepoRecord, pull: PullRecord): Promise<Record<string, unknown>> {
  const issue = ctx.state.issue(repo, pull.number);
  const labels = (issue?.labels ?? []).map((name) => ctx.state.ensureLabel(repo, name));
  const shas = { head: await branchHead(repo.bareDir, pull.headRef), base: await branchHead(repo.bareDir, pull.baseRef) };
  return pullJson(ctx.urls, repo, pull, shas, labels);
}

function requirePull(request: RouteRequest, repo: RepoRecord): PullRecord {
  const pull = request.ctx.state.pull(repo, intParam(request, "pull_number"));
  if (!pull) throw new HttpError(404, "Not Found");
  return pull;
}

/** `owner:branch` or `branch` → branch, when the owner is the repository's. */
function branchOf(repo: RepoRecord, head: string): string | undefined {
  const colon = head.indexOf(":");
  if (colon < 0) return head;
  return head.slice(0, colon).toLowerCase() === repo.owner.toLowerCase() ? head.slice(colon + 1) : undefined;
}

function invalid(field: string): HttpError {
  return new HttpError(422, "Validation Failed", [{ resource: "PullRequest", field, code: "invalid" }]);
}

function custom(message: string): HttpError {
  return new HttpError(422, "Validation Failed", [{ resource: "PullRequest", code: "custom", message }]);
}

async function createPull(request: RouteRequest): Promise<Record<string, unknown>> {
  const { ctx } = request;
  const repo = requireRepo(request);
  const body = bodyObject(request);
  const head = branchOf(repo, String(body.head));
  const base = String(body.base);
  if (!(await branchHead(repo.bareDir, base))) throw invalid("base");
  if (!head || !(await branchHead(repo.bareDir, head))) throw invalid("head");
  if ((await commitsAhead(repo.bareDir, `refs/heads/${base}`, `refs/heads/${head}`)) === 0) throw custom(`No commits between ${base} and ${head}`);
  if (ctx.state.pulls.some((pull) => pull.repo === repo.fullName && pull.state === "open" && pull.headRef === head && pull.baseRef === base)) {
    throw custom(`A pull request already exists for ${repo.owner}:${head}.`);
  }
  const number = ctx.state.nextNumber(repo);
  const now = timestamp();
  const id = ctx.state.nextId();
  const text = typeof body.body === "string" ? body.body : null;
  const title = String(body.title ?? "");
  ctx.state.issues.push({
    repo: repo.fullName,
    number,
    id: ctx.state.nextId(),
    nodeId: nodeId("I", id),
    title,
    body: text,
    user: ctx.botLogin,
    state: "open",
    labels: [],
    isPull: true,
    createdAt: now,
    updatedAt: now,
  });
  const pull: PullRecord = {
    repo: repo.fullName,
    number,
    id,
    nodeId: nodeId("PR", id),
    title,
    body: text,
    user: ctx.botLogin,
    state: "open",
    draft: body.draft === true,
    headRef: head,
    baseRef: base,
    createdAt: now,
    updatedAt: now,
    history: [body],
  };
  ctx.state.pulls.push(pull);
  return pullResponse(ctx, repo, pull);
}

/** Pull request routes (drafts are marked ready through GraphQL, as on GitHub). */
export const pullRoutes: Route[] = [
  {
    method: "POST",
    template: "/repos/{owner}/{repo}/pulls",
    auth: "installation",
    handle: async (request) => ({ status: 201, json: await createPull(request) }),
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/pulls",
    auth: "installation",
    handle: async (request) => {
      const repo = requireRepo(request);
      const state = request.query.get("state") ?? "open";
      const head = request.query.get("head");
      const headBranch = head === null ? undefined : branchOf(repo, head);
      const base = request.query.get("base");
      const matching = request.ctx.state.pulls
        .filter((pull) => pull.repo === repo.fullName && (state === "all" || pull.state === state))
        .filter((pull) => head === null || pull.headRef === headBranch)
        .filter((pull) => base === null || pull.baseRef === base)
        .reverse();
      const page = paginate(request, matching);
      return { status: 200, json: await Promise.all(page.items.map((pull) => pullResponse(request.ctx, repo, pull))), headers: page.headers };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/pulls/{pull_number}",
    auth: "installation",
    handle: async (request) => {
      const repo = requireRepo(request);
      return { status: 200, json: await pullResponse(request.ctx, repo, requirePull(request, repo)) };
    },
  },
  {
    method: "PATCH",
    template: "/repos/{owner}/{repo}/pulls/{pull_number}",
    auth: "installation",
    handle: async (request) => {
      const repo = requireRepo(request);
      const pull = requirePull(request, repo);
      const body = bodyObject(request);
      const issue = request.ctx.state.issue(repo, pull.number);
      if (typeof body.base === "string") {
        if (!(await branchHead(repo.bareDir, body.base))) throw invalid("base");
        pull.baseRef = body.base;
      }
      if (typeof body.title === "string") pull.title = body.title;
      if (typeof body.body === "string") pull.body = body.body;
      if (body.state === "open" || body.state === "closed") pull.state = body.state;
      pull.updatedAt = timestamp();
      pull.history.push(body);
      if (issue) Object.assign(issue, { title: pull.title, body: pull.body, state: pull.state, updatedAt: pull.updatedAt });
      return { status: 200, json: await pullResponse(request.ctx, repo, pull) };
    },
  },
];
