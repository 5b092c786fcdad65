import { HttpError, requireRepo } from "../http.js";
import { readRefPath } from "../repos.js";
import { repoJson, userJson } from "../shapes.js";
import type { RepoRole } from "../state.js";
import type { Route } from "./types.js";

/** `permission` as GitHub reports it for a role: maintain counts as write, triage as read. */
const PERMISSION_OF_ROLE: Record<RepoRole, string> = {
  admin: "admin",
  maintain: "write",
  write: "write",
  triage: "read",
  read: "read",
  none: "none",
};

/** Base64 wrapped at 60 columns, as the contents API returns it. */
function wrappedBase64(bytes: Buffer): string {
  return (bytes.toString("base64").match(/.{1,60}/g) ?? [""]).join("\n") + "\n";
}

function wantsRaw(accept: string | string[] | undefined): boolean {
  return /application\/vnd\.github(?:\.v3)?\.raw/i.test(String(accept ?? ""));
}

/** Repository, permission and contents routes. */
export const repoRoutes: Route[] = [
  {
    method: "GET",
    template: "/repos/{owner}/{repo}",
    auth: "installation",
    handle: (request) => ({ status: 200, json: repoJson(request.ctx.urls, requireRepo(request)) }),
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/collaborators/{username}/permission",
    auth: "installation",
    handle: (request) => {
      const repo = requireRepo(request);
      const login = request.params.username ?? "";
      const role = repo.roles.get(login.toLowerCase()) ?? (login.toLowerCase() === repo.owner.toLowerCase() ? "admin" : "none");
      return { status: 200, json: { permission: PERMISSION_OF_ROLE[role], role_name: role, user: userJson(request.ctx.urls, login) } };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/contents/{path}",
    auth: "installation",
    handle: async (request) => {
      const { ctx } = request;
      const repo = requireRepo(request);
      const ref = request.query.get("ref") ?? repo.defaultBranch;
      const path = request.params.path ?? "";
      const { commit, entry } = await readRefPath(repo.bareDir, ref, path);
      if (!commit) throw new HttpError(404, `No commit found for the ref ${ref}`);
      if (entry.kind === "missing") throw new HttpError(404, "Not Found");
      const api = `${ctx.urls.api}/repos/${repo.fullName}`;
      const describe = (entryPath: string, type: "file" | "dir", sha: string, size: number): Record<string, unknown> => ({
        type,
        size,
        name: entryPath.split("/").pop() ?? entryPath,
        path: entryPath,
        sha,
        url: `${api}/contents/${entryPath}?ref=${encodeURIComponent(ref)}`,
        git_url: `${api}/git/${type === "dir" ? "trees" : "blobs"}/${sha}`,
        html_url: `${ctx.urls.web}/${repo.fullName}/${type === "dir" ? "tree" : "blob"}/${ref}/${entryPath}`,
        download_url: type === "dir" ? null : `${ctx.urls.web}/${repo.fullName}/raw/${ref}/${entryPath}`,
        _links: {
          self: `${api}/contents/${entryPath}?ref=${encodeURIComponent(ref)}`,
          git: `${api}/git/${type === "dir" ? "trees" : "blobs"}/${sha}`,
          html: `${ctx.urls.web}/${repo.fullName}/${type === "dir" ? "tree" : "blob"}/${ref}/${entryPath}`,
        },
      });
      if (entry.kind === "dir") {
        const prefix = path.replace(/^\/+|\/+$/g, "");
        return { status: 200, json: entry.entries.map((child) => describe(prefix ? `${prefix}/${child.name}` : child.name, child.type, child.sha, 0)) };
      }
      if (wantsRaw(request.headers.accept)) {
        return { status: 200, raw: { contentType: "text/plain; charset=utf-8", body: entry.content } };
      }
      return {
        status: 200,
        json: { ...describe(path, "file", entry.sha, entry.content.length), encoding: "base64", content: wrappedBase64(entry.content) },
      };
    },
  },
];
