import { bodyObject, HttpError, intParam, paginate, requireRepo, type RouteRequest } from "../http.js";
import { knownCommit, resolveCommit } from "../repos.js";
import { checkRunJson } from "../shapes.js";
import { nodeId, timestamp, type CheckRunRecord, type RepoRecord } from "../state.js";
import type { Route } from "./types.js";

/** GitHub counts a check run's summary and text in bytes of UTF-8 and refuses more than this. */
export const CHECK_RUN_TEXT_LIMIT_BYTES = 65535;

function invalidRequest(detail: string): HttpError {
  // A correct App never sends these, so they are recorded as unexpected.
  return new HttpError(422, `Invalid request.\n\n${detail}`, undefined, true);
}

/** Applies a create or update body to a check run, with GitHub's own rules. */
function apply(run: CheckRunRecord, body: Record<string, unknown>): void {
  const output = body.output as Record<string, unknown> | undefined;
  for (const field of ["summary", "text"] as const) {
    const value = output?.[field];
    if (typeof value === "string") {
      const bytes = Buffer.byteLength(value, "utf8");
      if (bytes > CHECK_RUN_TEXT_LIMIT_BYTES) invalidRequestThrow(`Only ${CHECK_RUN_TEXT_LIMIT_BYTES} characters are allowed; ${bytes} were supplied.`);
    }
  }
  // Checked before anything changes, so a refused update leaves the check run as it was.
  const nextConclusion = typeof body.conclusion === "string" ? body.conclusion : run.conclusion;
  const nextStatus = typeof body.conclusion === "string" ? "completed" : typeof body.status === "string" ? body.status : run.status;
  if (nextStatus === "completed" && nextConclusion === null) invalidRequestThrow("`conclusion` is required when `status` is `completed`.");
  if (typeof body.name === "string") run.name = body.name;
  if (typeof body.details_url === "string") run.detailsUrl = body.details_url;
  if (typeof body.external_id === "string") run.externalId = body.external_id;
  if (typeof body.started_at === "string") run.startedAt = body.started_at;
  if (typeof body.status === "string") run.status = body.status as CheckRunRecord["status"];
  if (typeof body.conclusion === "string") {
    run.conclusion = body.conclusion;
    run.status = "completed";
  }
  if (run.status === "in_progress" && run.startedAt === null) run.startedAt = timestamp();
  if (run.status === "completed") run.completedAt = typeof body.completed_at === "string" ? body.completed_at : (run.completedAt ?? timestamp());
  if (output) {
    run.output = {
      title: typeof output.title === "string" ? output.title : run.output.title,
      summary: typeof output.summary === "string" ? output.summary : run.output.summary,
      text: typeof output.text === "string" ? output.text : run.output.text,
      annotationsCount: run.output.annotationsCount + (Array.isArray(output.annotations) ? output.annotations.length : 0),
    };
  }
  if (Array.isArray(body.actions)) run.actions = body.actions as CheckRunRecord["actions"];
  run.history.push(body);
}

function invalidRequestThrow(detail: string): never {
  throw invalidRequest(detail);
}

function requireRun(request: RouteRequest, repo: RepoRecord): CheckRunRecord {
  const id = intParam(request, "check_run_id");
  const run = request.ctx.state.checkRuns.find((candidate) => candidate.repo === repo.fullName && candidate.id === id);
  if (!run) throw new HttpError(404, "Not Found");
  return run;
}

/** Check run routes: create, update, get, and list for a ref. */
export const checkRoutes: Route[] = [
  {
    method: "POST",
    template: "/repos/{owner}/{repo}/check-runs",
    auth: "installation",
    handle: async (request) => {
      const { ctx } = request;
      const repo = requireRepo(request);
      const body = bodyObject(request);
      const headSha = String(body.head_sha);
      const commit = /^[0-9a-f]{40}$/i.test(headSha) ? await knownCommit(repo.bareDir, headSha) : null;
      if (!commit) throw new HttpError(422, `No commit found for SHA: ${headSha}`, undefined, true);
      const id = ctx.state.nextId();
      const run: CheckRunRecord = {
        repo: repo.fullName,
        id,
        nodeId: nodeId("CR", id),
        name: "",
        headSha: commit,
        status: "queued",
        conclusion: null,
        startedAt: null,
        completedAt: null,
        externalId: null,
        detailsUrl: null,
        output: { title: null, summary: null, text: null, annotationsCount: 0 },
        actions: [],
        history: [],
      };
      apply(run, body);
      ctx.state.checkRuns.push(run);
      return { status: 201, json: checkRunJson(ctx.urls, run, ctx.appJson()) };
    },
  },
  {
    method: "PATCH",
    template: "/repos/{owner}/{repo}/check-runs/{check_run_id}",
    auth: "installation",
    handle: (request) => {
      const run = requireRun(request, requireRepo(request));
      apply(run, bodyObject(request));
      return { status: 200, json: checkRunJson(request.ctx.urls, run, request.ctx.appJson()) };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/check-runs/{check_run_id}",
    auth: "installation",
    handle: (request) => ({ status: 200, json: checkRunJson(request.ctx.urls, requireRun(request, requireRepo(request)), request.ctx.appJson()) }),
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/commits/{ref}/check-runs",
    auth: "installation",
    handle: async (request) => {
      const { ctx } = request;
      const repo = requireRepo(request);
      const sha = await resolveCommit(repo.bareDir, request.params.ref ?? "");
      if (!sha) throw new HttpError(422, `No commit found for SHA: ${request.params.ref ?? ""}`);
      const name = request.query.get("check_name");
      const status = request.query.get("status");
      let runs = ctx.state.checkRuns.filter((run) => run.repo === repo.fullName && run.headSha === sha);
      if (name !== null) runs = runs.filter((run) => run.name === name);
      if (status !== null) runs = runs.filter((run) => run.status === status);
      if ((request.query.get("filter") ?? "latest") === "latest") {
        runs = runs.filter((run) => !runs.some((other) => other.name === run.name && other.id > run.id));
      }
      runs = [...runs].reverse();
      const page = paginate(request, runs);
      return {
        status: 200,
        json: { total_count: runs.length, check_runs: page.items.map((run) => checkRunJson(ctx.urls, run, ctx.appJson())) },
        headers: page.headers,
      };
    },
  },
];
