import type { RouteRequest, RouteResponse } from "../http.js";

/** Who may call a route: the App itself (JWT), an installation (token), or anyone. */
export type RouteAuth = "app" | "installation" | "none";

/** One served route. `template` is the path as GitHub's OpenAPI description writes it. */
export interface Route {
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  template: string;
  auth: RouteAuth;
  handle(request: RouteRequest): RouteResponse | Promise<RouteResponse>;
}
