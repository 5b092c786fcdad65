/**
 * `GET /harness` (the HTML page) and `GET /harness/status.json` on the App's server, read-only
 * and behind `HARNESS_STATUS_TOKEN`: `Authorization: Bearer <token>`, or `?token=` for a
 * browser's address bar. Without a configured token the routes answer 404 and say how to turn
 * them on; a wrong or missing token answers 401. Nothing else of the server is touched. The
 * token never reaches the App's log: `harness serve` lifts it off each request first (credentials.ts).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { StatusReport } from "./report.js";
import { renderStatusPage } from "./render-html.js";
import { offeredToken } from "./credentials.js";

export const STATUS_PATH = "/harness";

export interface StatusRouteOptions {
  /** HARNESS_STATUS_TOKEN; the routes are off when absent. */
  token: string | undefined;
  collect: () => Promise<StatusReport>;
  webBase: string;
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** True when the request carries the token (compared in constant time). */
export function authorized(request: IncomingMessage, url: URL, token: string): boolean {
  return timingSafeEqual(digest(offeredToken(request, url)), digest(token));
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, {
    "content-type": type,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
  });
  response.end(body);
}

/** A handler for Probot's server: answers the status routes and returns false for everything else. */
export function statusHandler(options: StatusRouteOptions): (request: IncomingMessage, response: ServerResponse) => Promise<boolean> {
  return async (request, response) => {
    const url = new URL(request.url ?? "/", "http://status.invalid");
    if (url.pathname !== STATUS_PATH && url.pathname !== `${STATUS_PATH}/status.json`) return false;
    if (request.method !== "GET") {
      send(response, 405, "text/plain; charset=utf-8", "The status page is read-only.\n");
      return true;
    }
    if (!options.token) {
      send(response, 404, "text/plain; charset=utf-8", "The status page is off: set HARNESS_STATUS_TOKEN to turn it on.\n");
      return true;
    }
    if (!authorized(request, url, options.token)) {
      send(response, 401, "text/plain; charset=utf-8", "A valid HARNESS_STATUS_TOKEN is needed: Authorization: Bearer <token>, or ?token=<token>.\n");
      return true;
    }
    const report = await options.collect();
    if (url.pathname.endsWith(".json")) send(response, 200, "application/json; charset=utf-8", `${JSON.stringify(report, null, 2)}\n`);
    else send(response, 200, "text/html; charset=utf-8", renderStatusPage(report, { webBase: options.webBase }));
    return true;
  };
}

/** Where links to GitHub point, from Probot's GHE_HOST and GHE_PROTOCOL. */
export function webBaseFromEnv(env: Readonly<Record<string, string | undefined>>): string {
  const host = env.GHE_HOST?.trim();
  return host ? `${env.GHE_PROTOCOL?.trim() || "https"}://${host}` : "https://github.com";
}
