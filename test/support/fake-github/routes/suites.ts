import { HttpError, intParam, paginate, requireRepo } from "../http.js";
import { annotationJson } from "../review-shapes.js";
import { checkRunJson } from "../shapes.js";
import type { Route } from "./types.js";

/** Where an Actions job log is downloaded from (GitHub's is a signed blob-storage URL that needs no token). */
export const JOB_LOG_DOWNLOAD_PREFIX = "/_fake/job-logs/";

/** Other Apps' check suites and runs: a suite's runs, a run's annotations, and an Actions job's log. */
export const suiteRoutes: Route[] = [
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/check-suites/{check_suite_id}/check-runs",
    auth: "installation",
    handle: (request) => {
      const { ctx } = request;
      const repo = requireRepo(request);
      const suiteId = intParam(request, "check_suite_id");
      if (!ctx.state.checkSuites.some((suite) => suite.repo === repo.fullName && suite.id === suiteId)) throw new HttpError(404, "Not Found");
      const status = request.query.get("status");
      let runs = ctx.state.checkRuns.filter((run) => run.repo === repo.fullName && run.suiteId === suiteId);
      if (status !== null) runs = runs.filter((run) => run.status === status);
      const page = paginate(request, runs);
      return {
        status: 200,
        json: { total_count: runs.length, check_runs: page.items.map((run) => checkRunJson(ctx.urls, run, ctx.appJson())) },
        headers: page.headers,
      };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/check-runs/{check_run_id}/annotations",
    auth: "installation",
    handle: (request) => {
      const repo = requireRepo(request);
      const id = intParam(request, "check_run_id");
      const run = request.ctx.state.checkRuns.find((candidate) => candidate.repo === repo.fullName && candidate.id === id);
      if (!run) throw new HttpError(404, "Not Found");
      const page = paginate(request, run.annotations ?? []);
      return { status: 200, json: page.items.map((annotation) => annotationJson(request.ctx.urls, repo.fullName, annotation)), headers: page.headers };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs",
    auth: "installation",
    handle: (request) => {
      const repo = requireRepo(request);
      const jobId = intParam(request, "job_id");
      const log = request.ctx.state.jobLogs.find((candidate) => candidate.repo === repo.fullName && candidate.jobId === jobId);
      if (!log) throw new HttpError(404, "Not Found");
      if (!log.redirect) return { status: 200, raw: { contentType: "text/plain; charset=utf-8", body: log.text } };
      return { status: 302, headers: { location: `${request.ctx.urls.web}${JOB_LOG_DOWNLOAD_PREFIX}${log.key}` } };
    },
  },
];
