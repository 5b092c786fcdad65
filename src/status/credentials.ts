/**
 * The status token, out of what gets logged. Probot's request logger writes every request's
 * URL and headers, so a token in `?token=` or in `Authorization` would land in the App's log.
 * {@link liftCredentials} runs on the server before any other request listener: it takes the
 * token out of the URL's query and the `Authorization` header out of the headers and keeps them
 * on the request where only {@link offeredToken} reads them.
 */
import type { IncomingMessage } from "node:http";

const LIFTED = Symbol("harness.liftedCredentials");

interface Lifted {
  authorization?: string;
  queryToken?: string;
}

type WithLifted = IncomingMessage & { [LIFTED]?: Lifted };

/** The name of the query parameter that carries the token (for a browser's address bar). */
export const TOKEN_PARAM = "token";

/** Takes `?token=` and the `Authorization` header off `request`, kept for {@link offeredToken} only. */
export function liftCredentials(request: IncomingMessage): void {
  const lifted: Lifted = {};
  const { authorization } = request.headers;
  if (authorization !== undefined) {
    lifted.authorization = authorization;
    delete request.headers.authorization;
  }
  const url = request.url ?? "";
  const query = url.indexOf("?");
  if (query !== -1) {
    // Parsed whenever there is a query: a percent-encoded name (`to%6Ben`) is the same parameter.
    const params = new URLSearchParams(url.slice(query + 1));
    const token = params.get(TOKEN_PARAM);
    if (token !== null) {
      lifted.queryToken = token;
      params.delete(TOKEN_PARAM);
      const rest = params.toString();
      request.url = `${url.slice(0, query)}${rest === "" ? "" : `?${rest}`}`;
    }
  }
  (request as WithLifted)[LIFTED] = lifted;
}

/**
 * The token a request offers: `Authorization: Bearer <token>`, else `?token=`. Read from what
 * {@link liftCredentials} kept, or from the request itself where it did not run (an embedding server).
 */
export function offeredToken(request: IncomingMessage, url: URL): string {
  const lifted = (request as WithLifted)[LIFTED];
  const header = lifted ? lifted.authorization : request.headers.authorization;
  if (header?.startsWith("Bearer ")) return header.slice("Bearer ".length);
  return (lifted ? lifted.queryToken : url.searchParams.get(TOKEN_PARAM)) ?? "";
}
