import { bodyObject, type RouteRequest, type RouteResponse } from "../http.js";
import { timestamp, type PullRecord } from "../state.js";
import type { Route } from "./types.js";

/** The GraphQL mutations the fake understands, each flipping a pull request's draft flag. */
const DRAFT_MUTATIONS: Record<string, boolean> = {
  markPullRequestReadyForReview: false,
  convertPullRequestToDraft: true,
};

function graphqlErrors(message: string, type: string): RouteResponse {
  // GitHub answers GraphQL errors with 200 and an `errors` array; a correct App never gets one.
  return { status: 200, json: { errors: [{ type, message }] }, unexpected: `GraphQL: ${message}` };
}

/**
 * Reads the `pullRequestId` argument of a mutation: a string literal in the query, or a
 * `$variable` looked up in `variables`. The fake reads only this one argument shape; anything
 * else is refused loudly rather than guessed.
 */
function pullRequestIdArgument(query: string, variables: Record<string, unknown>): string | undefined {
  const match = /pullRequestId\s*:\s*(?:"([^"]*)"|\$(\w+))/.exec(query);
  if (!match) return undefined;
  if (match[1] !== undefined) return match[1];
  const value = variables[match[2] ?? ""];
  return typeof value === "string" ? value : undefined;
}

function handleGraphql(request: RouteRequest): RouteResponse {
  const body = bodyObject(request);
  const query = typeof body.query === "string" ? body.query : "";
  const variables = (body.variables as Record<string, unknown> | undefined) ?? {};
  const mutation = Object.keys(DRAFT_MUTATIONS).find((name) => new RegExp(`\\b${name}\\s*\\(`).test(query));
  if (!/^\s*mutation\b/.test(query) || mutation === undefined) {
    return graphqlErrors(`The fake serves only the mutations ${Object.keys(DRAFT_MUTATIONS).join(", ")}; got: ${query.slice(0, 200)}`, "UNSUPPORTED");
  }
  const id = pullRequestIdArgument(query, variables);
  const pull: PullRecord | undefined = request.ctx.state.pulls.find((candidate) => candidate.nodeId === id);
  if (!pull) return graphqlErrors(`Could not resolve to a node with the global id of '${id ?? ""}'`, "NOT_FOUND");
  pull.draft = DRAFT_MUTATIONS[mutation] ?? pull.draft;
  pull.updatedAt = timestamp();
  pull.history.push({ graphql: mutation });
  const pullRequest = {
    id: pull.nodeId,
    number: pull.number,
    isDraft: pull.draft,
    state: pull.state.toUpperCase(),
    url: `${request.ctx.urls.web}/${pull.repo}/pull/${pull.number}`,
    title: pull.title,
  };
  return { status: 200, json: { data: { [mutation]: { clientMutationId: null, pullRequest } } } };
}

/** `POST /api/graphql`, outside the REST prefix and the OpenAPI description. */
export const graphqlRoute: Route = { method: "POST", template: "/graphql", auth: "installation", handle: handleGraphql };
