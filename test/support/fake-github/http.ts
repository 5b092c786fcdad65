import type { HookDeliveries } from "./hook.js";
import type { FailureWindows, InjectedFailure } from "./failures.js";
import type { RequestGates } from "./gates.js";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { KeyObject } from "node:crypto";
import { gunzipSync } from "node:zlib";
import type { TokenStore } from "./auth.js";
import type { Urls } from "./shapes.js";
import type { FakeState, RepoRecord } from "./state.js";

/** Where GitHub's error bodies point; the fake answers with the same shape. */
export const DOCS_URL = "https://docs.github.com/enterprise-server@3.19/rest";

/** One field error in a 422 body, as GitHub lists them. */
export interface FieldError {
  resource: string;
  field?: string;
  code: string;
  message?: string;
}

/**
 * An answer other than success. `unexpected` marks a request a correct App never makes (an
 * invalid body, an over-long check run summary): it is recorded so the test fails.
 */
export class HttpError extends Error {
  readonly failureClass = "fake-github-http";
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: FieldError[],
    readonly unexpected = false,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** GitHub's error body for a status and message. */
export function errorBody(status: number, message: string, errors?: FieldError[]): Record<string, unknown> {
  return { message, ...(errors ? { errors } : {}), documentation_url: DOCS_URL, status: String(status) };
}

/** The fake's identity and shared parts every route handler may use. */
export interface FakeContext {
  state: FakeState;
  urls: Urls;
  tokens: TokenStore;
  appId: number;
  appSlug: string;
  /** The login of the App's bot user (`<slug>[bot]`), author of everything the App posts. */
  botLogin: string;
  installationId: number;
  /** Other installation ids the App has (same account, same repositories). */
  moreInstallations: number[];
  /** The account the App is installed on. */
  installationAccount: string;
  publicKey: KeyObject;
  /** Folder holding `<owner>/<name>.git` bare repositories. */
  reposRoot: string;
  /** Also check every successful JSON response against GitHub's response schema (slower; for the fake's own tests). */
  validateResponses: boolean;
  /** GitHub's App object (`GET /app`), also embedded in check runs. */
  appJson(): Record<string, unknown>;
  /** Windows of injected failures the test opened. */
  failures: FailureWindows;
  /** Gates at which matching requests wait until the test opens them. */
  gates: RequestGates;
  /** The App's webhook: where deliveries go, and each one sent. */
  hook: HookDeliveries;
}

/** What a route handler receives. */
export interface RouteRequest {
  ctx: FakeContext;
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  headers: IncomingHttpHeaders;
  /** The injected mode a route itself plays out (`signed-commits`), when a window matched. */
  injected?: InjectedFailure;
}

/** What a route handler answers. `raw` bodies are sent as they are, `json` ones serialized. */
export interface RouteResponse {
  status: number;
  json?: unknown;
  raw?: { contentType: string; body: Buffer };
  headers?: Record<string, string>;
  /** Set when the answer is a refusal a correct App never meets (GraphQL answers 200 with errors). */
  unexpected?: string;
}

/** Reads a whole request body, gunzipping it when the client compressed it (git does). */
export async function readBody(request: IncomingMessage, limitBytes = 256 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limitBytes) throw new HttpError(413, "Request body too large");
    chunks.push(buffer);
  }
  const body = Buffer.concat(chunks, size);
  const encoding = String(request.headers["content-encoding"] ?? "").toLowerCase();
  if (encoding === "gzip" || encoding === "x-gzip") {
    try {
      return gunzipSync(body);
    } catch {
      throw new HttpError(400, "Problems parsing the gzip-encoded body", undefined, true);
    }
  }
  return body;
}

/** The repository a `/repos/{owner}/{repo}/…` route names; 404 like GitHub when unknown. */
export function requireRepo(request: RouteRequest): RepoRecord {
  const repo = request.ctx.state.repo(request.params.owner ?? "", request.params.repo ?? "");
  if (!repo) throw new HttpError(404, "Not Found");
  return repo;
}

/** A positive integer path parameter; 404 otherwise (GitHub does not route non-numbers). */
export function intParam(request: RouteRequest, name: string): number {
  const value = Number(request.params[name]);
  if (!Number.isSafeInteger(value) || value <= 0) throw new HttpError(404, "Not Found");
  return value;
}

/** The body as an object (validation already ran; this only narrows the type). */
export function bodyObject(request: RouteRequest): Record<string, unknown> {
  const body = request.body;
  return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/**
 * One page of `items` as GitHub pages lists: `per_page` (default 30, at most 100), `page`, and
 * a `Link` header with `next`/`last` so Octokit's paginate follows it.
 */
export function paginate<T>(request: RouteRequest, items: T[]): { items: T[]; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number(request.query.get("per_page") ?? 30) || 30));
  const page = Math.max(1, Number(request.query.get("page") ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (n: number, rel: string): string => {
    const query = new URLSearchParams(request.query);
    query.set("per_page", String(perPage));
    query.set("page", String(n));
    return `<${request.ctx.urls.api}${request.path}?${query.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page < last) links.push(link(page + 1, "next"), link(last, "last"));
  if (page > 1) links.push(link(1, "first"), link(page - 1, "prev"));
  return { items: items.slice((page - 1) * perPage, page * perPage), headers: links.length ? { link: links.join(", ") } : {} };
}
