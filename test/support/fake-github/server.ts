import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { credentialOf, FakeAuthError, verifyAppJwt } from "./auth.js";
import { DEFAULT_PUSH_REFUSAL, failureAnswer, type InjectedFailure } from "./failures.js";
import { GIT_PATH, serveGit } from "./git-http.js";
import { errorBody, HttpError, readBody, type FakeContext, type RouteResponse } from "./http.js";
import { requestBodyProblems, responseBodyProblems } from "./openapi-validate.js";
import { Router } from "./router.js";
import { checkTokenUse, permissionFor } from "./token-scope.js";
import { graphqlRoute, JOB_LOG_DOWNLOAD_PREFIX, REST_ROUTES, type Route } from "./routes/index.js";
import { timestamp } from "./state.js";

const REST_PREFIX = "/api/v3";
const GRAPHQL_PATH = "/api/graphql";
const restRouter = new Router(REST_ROUTES);

/**
 * Checks a route's credential; throws {@link FakeAuthError} when it does not pass, and
 * HttpError when an installation token is used outside its repositories or permissions.
 */
function authenticate(ctx: FakeContext, route: Route, request: IncomingMessage, params: Record<string, string>, path: string): void {
  if (route.auth === "none") return;
  const credential = credentialOf(request.headers.authorization);
  if (route.auth === "app") {
    if (!credential) throw new FakeAuthError("missing", "A JSON web token could not be decoded");
    verifyAppJwt(credential, ctx.appId, ctx.publicKey);
    return;
  }
  const token = ctx.tokens.check(credential);
  const repo = params.owner !== undefined && params.repo !== undefined ? ctx.state.repo(params.owner, params.repo) : undefined;
  checkTokenUse(token, repo, permissionFor(route.method, path));
}

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    throw new HttpError(400, "Problems parsing JSON", undefined, true);
  }
}

/** Runs one API route: auth, JSON parsing, OpenAPI validation, then the handler. */
async function runRoute(
  ctx: FakeContext,
  route: Route,
  params: Record<string, string>,
  request: IncomingMessage,
  url: URL,
  path: string,
  body: unknown,
  injected?: InjectedFailure,
): Promise<RouteResponse> {
  try {
    authenticate(ctx, route, request, params, path);
  } catch (error) {
    if (!(error instanceof FakeAuthError)) throw error;
    return { status: 401, json: errorBody(401, error.message), unexpected: `401 ${error.reason}` };
  }
  if (route !== graphqlRoute) {
    const problems = requestBodyProblems(route.method, route.template, body);
    if (problems.length > 0) {
      return {
        status: 422,
        json: errorBody(422, `Invalid request.\n\n${problems.join("\n")}`),
        unexpected: `body does not match GitHub's schema: ${problems.join(" ")}`,
      };
    }
  }
  const answer = await route.handle({
    ctx,
    method: route.method,
    path,
    params,
    query: url.searchParams,
    body,
    headers: request.headers,
    ...(injected ? { injected } : {}),
  });
  if (ctx.validateResponses && route !== graphqlRoute && answer.status < 300 && answer.json !== undefined) {
    const problems = responseBodyProblems(route.method, route.template, answer.status, answer.json);
    if (problems.length > 0) return { ...answer, unexpected: `the fake's response does not match GitHub's schema: ${problems.join(" ")}` };
  }
  return answer;
}

function send(response: ServerResponse, answer: RouteResponse): void {
  const headers: Record<string, string> = {
    "x-github-request-id": randomUUID(),
    "x-github-media-type": "github.v3; format=json",
    "x-ratelimit-limit": "5000",
    "x-ratelimit-remaining": "4999",
    "x-ratelimit-used": "1",
    "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
    "x-ratelimit-resource": "core",
    ...answer.headers,
  };
  if (answer.raw) {
    response.writeHead(answer.status, { ...headers, "content-type": answer.raw.contentType });
    response.end(answer.raw.body);
  } else if (answer.status === 204 || answer.json === undefined) {
    response.writeHead(answer.status, headers);
    response.end();
  } else {
    response.writeHead(answer.status, { ...headers, "content-type": "application/json; charset=utf-8" });
    response.end(JSON.stringify(answer.json));
  }
}

/**
 * Answers one HTTP request: git smart HTTP, REST under `/api/v3`, or GraphQL at `/api/graphql`.
 * Every request is recorded; a request a correct App never makes is also recorded as unexpected.
 */
export async function handle(ctx: FakeContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? "/", ctx.urls.web);
  const method = (request.method ?? "GET").toUpperCase();
  const record = (status: number, body: unknown, route?: string, unexpected?: string): void => {
    const encoding = request.headers["content-encoding"];
    const delivery = request.headers["x-github-delivery"];
    ctx.state.requests.push({
      method,
      path: url.pathname,
      query: url.search,
      body,
      status,
      at: timestamp(),
      ...(route ? { route } : {}),
      ...(typeof encoding === "string" ? { contentEncoding: encoding } : {}),
      ...(typeof delivery === "string" ? { delivery } : {}),
    });
    if (unexpected) ctx.state.unexpected.push({ method, path: url.pathname, status, reason: unexpected, body });
  };
  let parsed: unknown;
  let routeTemplate: string | undefined;
  try {
    const raw = await readBody(request);
    await ctx.gates.pass(method, url.pathname);
    const injected = ctx.failures.take(method, url.pathname);
    if (GIT_PATH.test(url.pathname)) {
      if (injected?.kind === "bad-gateway") {
        // A proxy in front of git answering 502: git reports "RPC failed; HTTP 502", nothing is received.
        const answer = failureAnswer(injected);
        send(response, answer);
        record(answer.status, undefined, "injected bad-gateway");
        return;
      }
      if (injected?.kind === "refused") {
        // GitHub answering git's smart HTTP with a status (403: the token may not push here), its words as the body.
        response.writeHead(injected.status, { "content-type": "text/plain; charset=utf-8" });
        response.end(`${injected.message}\n`);
        record(injected.status, undefined, `injected ${injected.status}`);
        return;
      }
      const refusal = injected?.kind === "push-refused" ? (injected.message ?? DEFAULT_PUSH_REFUSAL) : undefined;
      record(await serveGit(ctx, request, response, url, raw, refusal), undefined, "git");
      return;
    }
    if (method === "GET" && url.pathname.startsWith(JOB_LOG_DOWNLOAD_PREFIX)) {
      // The download a job log's 302 points at: signed by its unguessable key, no token (as GitHub's blob storage).
      const log = ctx.state.jobLogs.find((candidate) => candidate.key === url.pathname.slice(JOB_LOG_DOWNLOAD_PREFIX.length));
      if (!log) {
        send(response, { status: 404, json: errorBody(404, "Not Found") });
        record(404, undefined, "job log download", "no job log at that download URL");
        return;
      }
      send(response, { status: 200, raw: { contentType: "text/plain; charset=utf-8", body: log.text } });
      record(200, undefined, "job log download");
      return;
    }
    if (injected && injected.kind !== "push-refused" && injected.kind !== "signed-commits") {
      const answer = failureAnswer(injected);
      send(response, answer);
      record(answer.status, parseJson(raw), `injected ${injected.kind}`);
      return;
    }
    parsed = parseJson(raw);
    let matched: { route: Route; params: Record<string, string> } | undefined;
    let path = url.pathname;
    if (path === GRAPHQL_PATH && method === "POST") matched = { route: graphqlRoute, params: {} };
    else if (path.startsWith(`${REST_PREFIX}/`)) {
      path = path.slice(REST_PREFIX.length);
      matched = restRouter.match(method, path);
    }
    if (!matched) {
      send(response, { status: 404, json: errorBody(404, "Not Found") });
      record(404, parsed, undefined, "no such route in the fake (add it to the route table if the App needs it)");
      return;
    }
    routeTemplate = matched.route.template;
    const answer = await runRoute(
      ctx,
      matched.route,
      matched.params,
      request,
      url,
      url.pathname.startsWith(REST_PREFIX) ? path : url.pathname,
      parsed,
      injected,
    );
    send(response, answer);
    record(answer.status, parsed, routeTemplate, answer.unexpected);
  } catch (error) {
    const known = error instanceof HttpError;
    const status = known ? error.status : 500;
    const message = error instanceof Error ? error.message : String(error);
    if (!response.headersSent) send(response, { status, json: errorBody(status, message, known ? error.errors : undefined) });
    else response.end();
    const unexpected = !known ? `the fake failed: ${message}` : error.unexpected ? message : undefined;
    record(status, parsed, routeTemplate, unexpected);
  }
}
