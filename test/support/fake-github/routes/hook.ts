import { HttpError, type RouteRequest } from "../http.js";
import { hookDeliveryJson } from "../hook.js";
import type { Route } from "./types.js";

/** GitHub's cursors are opaque; the fake's names the delivery a page starts at. */
const cursorOf = (id: number): string => Buffer.from(`delivery:${id}`).toString("base64url");

function idOfCursor(cursor: string): number {
  const match = /^delivery:(\d+)$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match?.[1]) throw new HttpError(422, "Invalid cursor", undefined, true);
  return Number(match[1]);
}

/** One page of the App's deliveries, newest first, from the cursor on; `Link: <…>; rel="next"` while more remain. */
function listDeliveries(request: RouteRequest): { status: number; json: unknown; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number(request.query.get("per_page") ?? 30) || 30));
  const newestFirst = [...request.ctx.hook.records].sort((a, b) => b.id - a.id);
  const cursor = request.query.get("cursor");
  const start = cursor ? newestFirst.findIndex((record) => record.id <= idOfCursor(cursor)) : 0;
  const page = start < 0 ? [] : newestFirst.slice(start, start + perPage);
  const following = start < 0 ? undefined : newestFirst[start + perPage];
  const headers: Record<string, string> = {};
  if (following) {
    const query = new URLSearchParams(request.query);
    query.set("per_page", String(perPage));
    query.set("cursor", cursorOf(following.id));
    headers.link = `<${request.ctx.urls.api}${request.path}?${query.toString()}>; rel="next"`;
  }
  return { status: 200, json: page.map(hookDeliveryJson), headers };
}

/** The App's webhook deliveries, all authenticated by the App's JWT. */
export const hookRoutes: Route[] = [
  { method: "GET", template: "/app/hook/deliveries", auth: "app", handle: listDeliveries },
  {
    method: "POST",
    template: "/app/hook/deliveries/{delivery_id}/attempts",
    auth: "app",
    handle: (request) => {
      const id = Number(request.params.delivery_id);
      if (!Number.isSafeInteger(id) || !request.ctx.hook.redeliver(id)) throw new HttpError(404, "Not Found");
      return { status: 202, json: {} };
    },
  },
];
