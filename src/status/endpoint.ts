/**
 * `GET /harness/status.json` on the App: the same status as `harness status --json`, behind a
 * bearer token (`HARNESS_STATUS_TOKEN`). Without a configured token the endpoint answers 404:
 * nothing about the App is shown to the internet by default.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { collectStatus } from "./collect.js";

export const STATUS_PATH = "/harness/status.json";

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A Probot handler serving the status; returns false for any other path. */
export function statusHandler(args: { harnessHome: string; token: string | undefined }): (request: IncomingMessage, response: ServerResponse) => Promise<boolean> {
  return async (request, response) => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (path !== STATUS_PATH) return false;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): boolean => {
      response.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers });
      response.end(JSON.stringify(body));
      return true;
    };
    if (!args.token) return send(404, { message: "Not Found" });
    if (request.method !== "GET") return send(405, { message: "Method Not Allowed" }, { allow: "GET" });
    const header = request.headers.authorization ?? "";
    const given = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
    if (!sameToken(given, args.token)) return send(401, { message: "HARNESS_STATUS_TOKEN required as a bearer token" }, { "www-authenticate": "Bearer" });
    return send(200, await collectStatus(args.harnessHome));
  };
}
