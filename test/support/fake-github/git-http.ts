import { mkdir, writeFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { exec } from "../../../src/exec/index.js";
import { basicCredentials, FakeAuthError, type IssuedToken } from "./auth.js";
import { HttpError, type FakeContext } from "./http.js";
import { checkTokenUse } from "./token-scope.js";

/** `/<owner>/<name>.git/<rest>`: what git's smart HTTP asks for. */
export const GIT_PATH = /^\/([^/]+)\/([^/]+)\.git(\/.*)$/;

/** The username GitHub expects with an installation token in git's Basic authentication. */
export const GIT_TOKEN_USER = "x-access-token";

/** A CGI response split into status, headers and body. */
export function parseCgiResponse(output: Buffer): { status: number; headers: [string, string][]; body: Buffer } {
  let end = output.indexOf("\r\n\r\n");
  let separator = 4;
  const lfEnd = output.indexOf("\n\n");
  if (end < 0 || (lfEnd >= 0 && lfEnd < end)) {
    end = lfEnd;
    separator = 2;
  }
  if (end < 0) return { status: 502, headers: [], body: output };
  const headers: [string, string][] = [];
  let status = 200;
  for (const line of output.subarray(0, end).toString("latin1").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 500;
    else headers.push([name, value]);
  }
  return { status, headers, body: output.subarray(end + separator) };
}

/** Where git keeps its own programs (`git --exec-path`), asked once per process. */
let gitExecPath: Promise<string> | undefined;

/** `git-http-backend` itself: `git http-backend` is not built in, so `git` would only start it (one more process per request). */
async function httpBackend(cwd: string): Promise<string> {
  gitExecPath ??= exec(["git", "--exec-path"], { cwd, captureStdout: true, timeoutMs: 30_000 }).then((result) => {
    const path = result.stdout?.toString("utf8").trim() ?? "";
    if (result.exitCode !== 0 || path === "") throw new Error(`git --exec-path failed: ${result.tail}`);
    return path;
  });
  return join(await gitExecPath, "git-http-backend");
}

/**
 * Serves one smart-HTTP request by running `git-http-backend` as a CGI program through the
 * project's exec wrapper. Its configuration comes through `GIT_CONFIG_*`, which it and the
 * `receive-pack`/`upload-pack` it starts read: the hooks folder, and no automatic gc after a
 * push (`receive.autogc`; GitHub's maintenance is not receive-pack's, and in the fake it only
 * cost every push a `git gc --auto` on the machine the benchmarks measure). Both fetch and
 * push need Basic authentication with a valid installation token, as on GitHub. Returns the
 * status sent.
 */
export async function serveGit(
  ctx: FakeContext,
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  body: Buffer,
  refusal?: string,
): Promise<number> {
  const match = GIT_PATH.exec(url.pathname);
  const owner = decodeURIComponent(match?.[1] ?? "");
  const name = decodeURIComponent(match?.[2] ?? "");
  const send = (status: number, text: string, headers: Record<string, string> = {}): number => {
    response.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
    response.end(text);
    return status;
  };
  const credentials = basicCredentials(request.headers.authorization);
  let token: IssuedToken;
  try {
    if (!credentials) throw new FakeAuthError("missing", "Requires authentication");
    if (credentials.user !== GIT_TOKEN_USER) throw new FakeAuthError("malformed", "Invalid username or password.");
    token = ctx.tokens.check(credentials.password);
  } catch (error) {
    if (!(error instanceof FakeAuthError)) throw error;
    return send(401, `${error.message}\n`, { "www-authenticate": 'Basic realm="GitHub"' });
  }
  const repo = ctx.state.repo(owner, name);
  if (!repo) return send(404, "Repository not found.\n");
  // A push needs contents: write, a fetch contents: read, and the repository must be the token's.
  const pushing = (match?.[3] ?? "").includes("git-receive-pack") || url.searchParams.get("service") === "git-receive-pack";
  try {
    checkTokenUse(token, repo, ["contents", pushing ? "write" : "read"]);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    ctx.state.unexpected.push({ method: request.method ?? "GET", path: url.pathname, status: error.status, reason: error.message, body: undefined });
    return send(error.status === 404 ? 404 : 403, error.status === 404 ? "Repository not found.\n" : `${error.message}\n`);
  }
  const gitProtocol = request.headers["git-protocol"];
  // A refused push is refused the way GitHub does it: by a pre-receive hook, whose words git shows as `remote:` lines.
  const hooks = refusal !== undefined ? await refusalHooks(ctx.reposRoot) : "/dev/null";
  const result = await exec([await httpBackend(ctx.reposRoot)], {
    cwd: ctx.reposRoot,
    input: body,
    captureStdout: true,
    timeoutMs: 120_000,
    env: {
      set: {
        GIT_CONFIG_COUNT: "2",
        GIT_CONFIG_KEY_0: "core.hooksPath",
        GIT_CONFIG_VALUE_0: hooks,
        GIT_CONFIG_KEY_1: "receive.autogc",
        GIT_CONFIG_VALUE_1: "false",
        GIT_PROJECT_ROOT: ctx.reposRoot,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: `/${repo.owner}/${repo.name}.git${match?.[3] ?? ""}`,
        REQUEST_METHOD: request.method ?? "GET",
        QUERY_STRING: url.search.replace(/^\?/, ""),
        CONTENT_TYPE: String(request.headers["content-type"] ?? ""),
        CONTENT_LENGTH: String(body.length),
        REMOTE_USER: GIT_TOKEN_USER,
        REMOTE_ADDR: "127.0.0.1",
        ...(refusal !== undefined ? { FAKE_PUSH_REFUSAL: refusal } : {}),
        ...(typeof gitProtocol === "string" ? { GIT_PROTOCOL: gitProtocol, HTTP_GIT_PROTOCOL: gitProtocol } : {}),
      },
    },
  });
  if (!result.stdout || result.stdout.length === 0) return send(500, `git-http-backend failed: ${result.tail}\n`);
  const cgi = parseCgiResponse(result.stdout);
  response.statusCode = cgi.status;
  for (const [header, value] of cgi.headers) response.setHeader(header, value);
  response.end(cgi.body);
  return cgi.status;
}

/** A hooks folder whose pre-receive prints `$FAKE_PUSH_REFUSAL` and refuses the push. */
async function refusalHooks(reposRoot: string): Promise<string> {
  const dir = join(reposRoot, ".refusal-hooks");
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "pre-receive"), '#!/bin/sh\nprintf "%s\\n" "$FAKE_PUSH_REFUSAL" >&2\nexit 1\n', { mode: 0o755 });
  return dir;
}
