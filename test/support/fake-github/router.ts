import type { Route } from "./routes/index.js";

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
  literalSegments: number;
}

/** Path parameters that may span several segments (a file path in the contents API, a ref name `heads/<branch>`). */
const MULTI_SEGMENT = new Set(["path", "ref"]);

function compile(route: Route): CompiledRoute {
  const names: string[] = [];
  let literalSegments = 0;
  const source = route.template
    .split("/")
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (!param?.[1]) {
        if (segment !== "") literalSegments += 1;
        return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      }
      names.push(param[1]);
      return MULTI_SEGMENT.has(param[1]) ? "(.+)" : "([^/]+)";
    })
    .join("/");
  return { route, pattern: new RegExp(`^${source}/?$`), names, literalSegments };
}

/** Finds the route for a method and path, preferring templates with more literal segments. */
export class Router {
  private readonly compiled: CompiledRoute[];

  constructor(routes: readonly Route[]) {
    this.compiled = routes.map(compile).sort((a, b) => b.literalSegments - a.literalSegments);
  }

  match(method: string, path: string): { route: Route; params: Record<string, string> } | undefined {
    for (const candidate of this.compiled) {
      if (candidate.route.method !== method.toUpperCase()) continue;
      const found = candidate.pattern.exec(path);
      if (!found) continue;
      const params: Record<string, string> = {};
      candidate.names.forEach((name, index) => {
        params[name] = decodeURIComponent(found[index + 1] ?? "");
      });
      return { route: candidate.route, params };
    }
    return undefined;
  }
}
