import { git, gitResult } from "../../../../src/workspace/index.js";
import { bodyObject, HttpError, requireRepo, type RouteRequest } from "../http.js";
import type { RepoRecord } from "../state.js";
import type { Route } from "./types.js";

/** The signature the fake puts on API-made commits in the `signed-commits` mode (as GitHub signs some). */
const FAKE_SIGNATURE = ["-----BEGIN PGP SIGNATURE-----", "", "ZmFrZS1naXRodWIgc2lnbmF0dXJl", "-----END PGP SIGNATURE-----"];

interface GitPerson {
  name: string;
  email: string;
  date: string;
}

function refJson(request: RouteRequest, repo: RepoRecord, ref: string, sha: string, type: string): Record<string, unknown> {
  const api = `${request.ctx.urls.api}/repos/${repo.fullName}`;
  return {
    ref,
    node_id: `REF_kwDO${Buffer.from(`fake:${repo.fullName}:${ref}`).toString("base64url")}`,
    url: `${api}/git/${ref}`,
    object: { type, sha, url: `${api}/git/${type}s/${sha}` },
  };
}

/** Every ref under `refs/<prefix>` (a prefix of names, as GitHub matches it), with its object id and type. */
async function refsBeginning(repo: RepoRecord, prefix: string): Promise<{ ref: string; sha: string; type: string }[]> {
  const listed = await git(["for-each-ref", "--format=%(objectname) %(objecttype) %(refname)", "refs/"], { cwd: repo.bareDir, readOnly: true });
  return listed
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [sha = "", type = "", ref = ""] = line.split(" ");
      return { ref, sha, type };
    })
    .filter((entry) => entry.ref.startsWith(`refs/${prefix}`));
}

/** The type of each object id (undefined for one the repository does not have), from one git process. */
async function objectTypes(repo: RepoRecord, ids: string[]): Promise<(string | undefined)[]> {
  const asked = ids.map((id) => (/^[0-9a-f]{40}$/.test(id) ? id : "0".repeat(40)));
  const output = await git(["cat-file", "--batch-check=%(objecttype)"], { cwd: repo.bareDir, readOnly: true, input: asked.map((id) => `${id}\n`).join("") });
  const lines = output.split("\n");
  return asked.map((_, index) => {
    const line = lines[index];
    return line === undefined || line.includes(" ") ? undefined : line;
  });
}

/** `name <email> <epoch> <offset>`, as git writes a person, from GitHub's ISO 8601 date. */
function personLine(person: GitPerson): string {
  const epoch = Math.floor(Date.parse(person.date) / 1000);
  if (!Number.isFinite(epoch)) throw new HttpError(422, "Invalid request.\n\nInvalid date.");
  const offset = /([+-])(\d{2}):?(\d{2})$/.exec(person.date);
  return `${person.name} <${person.email}> ${epoch} ${offset ? `${offset[1]}${offset[2]}${offset[3]}` : "+0000"}`;
}

function personOf(value: unknown, fallback: GitPerson): GitPerson {
  const given = typeof value === "object" && value !== null ? (value as Partial<GitPerson>) : {};
  return { name: given.name ?? fallback.name, email: given.email ?? fallback.email, date: given.date ?? fallback.date };
}

/**
 * `POST git/commits`: the commit made in the bare repository with exactly the given tree,
 * parents, message, author and committer (the committer defaults to the author, the author to
 * the App's bot, the date to now). In the `signed-commits` mode the commit carries a signature
 * header, so its id differs from the one the caller's `git commit-tree` makes.
 */
async function createCommit(request: RouteRequest): Promise<Record<string, unknown>> {
  const { ctx } = request;
  const repo = requireRepo(request);
  const body = bodyObject(request);
  const tree = String(body.tree);
  const parents = Array.isArray(body.parents) ? body.parents.map(String) : [];
  const [treeType, ...parentTypes] = await objectTypes(repo, [tree, ...parents]);
  if (treeType !== "tree") throw new HttpError(422, "Tree SHA does not exist");
  if (parentTypes.some((type) => type !== "commit")) throw new HttpError(422, "Parent SHA does not exist or is not a commit object");
  const author = personOf(body.author, {
    name: ctx.botLogin,
    email: `${ctx.appId}+${ctx.botLogin}@users.noreply.github.com`,
    date: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
  });
  const committer = personOf(body.committer, author);
  const signed = request.injected?.kind === "signed-commits";
  const message = String(body.message);
  const headers = [`tree ${tree}`, ...parents.map((parent) => `parent ${parent}`), `author ${personLine(author)}`, `committer ${personLine(committer)}`];
  if (signed) headers.push(`gpgsig ${FAKE_SIGNATURE.join("\n ")}`);
  const sha = await git(["hash-object", "-t", "commit", "-w", "--stdin"], { cwd: repo.bareDir, input: `${headers.join("\n")}\n\n${message}` });
  const api = `${ctx.urls.api}/repos/${repo.fullName}`;
  return {
    sha,
    node_id: `C_kwDO${Buffer.from(`fake:${sha}`).toString("base64url")}`,
    url: `${api}/git/commits/${sha}`,
    html_url: `${ctx.urls.web}/${repo.fullName}/commit/${sha}`,
    author,
    committer,
    tree: { sha: tree, url: `${api}/git/trees/${tree}` },
    message,
    parents: parents.map((parent) => ({ sha: parent, url: `${api}/git/commits/${parent}`, html_url: `${ctx.urls.web}/${repo.fullName}/commit/${parent}` })),
    verification: {
      verified: signed,
      reason: signed ? "valid" : "unsigned",
      signature: signed ? FAKE_SIGNATURE.join("\n") : null,
      payload: null,
      verified_at: null,
    },
  };
}

/** `POST git/refs`: a new ref on a commit the repository has; an existing one or an unknown id is GitHub's 422. */
async function createRef(request: RouteRequest): Promise<Record<string, unknown>> {
  const repo = requireRepo(request);
  const body = bodyObject(request);
  const ref = String(body.ref);
  const sha = String(body.sha);
  if (!/^refs\/[^/]+\/./.test(ref)) throw new HttpError(422, "Reference name must start with 'refs/' and have at least two slashes.");
  const [type] = await objectTypes(repo, [sha]);
  if (type === undefined) throw new HttpError(422, "Object does not exist");
  // The zero id as the old value: git refuses, atomically, a ref that exists already.
  const made = await gitResult(["update-ref", ref, sha, "0".repeat(40)], { cwd: repo.bareDir });
  if (made.exitCode !== 0) {
    if ((await refsBeginning(repo, ref.slice("refs/".length))).some((entry) => entry.ref === ref)) throw new HttpError(422, "Reference already exists");
    throw new HttpError(422, `${ref} is not a valid ref name.`);
  }
  return refJson(request, repo, ref, sha, type);
}

/** Git data routes: refs read and made, and commits made, as the Git database API does. */
export const gitRoutes: Route[] = [
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/git/matching-refs/{ref}",
    auth: "installation",
    handle: async (request) => {
      const repo = requireRepo(request);
      const refs = await refsBeginning(repo, request.params.ref ?? "");
      return { status: 200, json: refs.map((entry) => refJson(request, repo, entry.ref, entry.sha, entry.type)) };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/git/ref/{ref}",
    auth: "installation",
    handle: async (request) => {
      const repo = requireRepo(request);
      const ref = `refs/${request.params.ref ?? ""}`;
      const found = (await refsBeginning(repo, request.params.ref ?? "")).find((entry) => entry.ref === ref);
      if (!found) throw new HttpError(404, "Not Found");
      return { status: 200, json: refJson(request, repo, found.ref, found.sha, found.type) };
    },
  },
  {
    method: "POST",
    template: "/repos/{owner}/{repo}/git/commits",
    auth: "installation",
    handle: async (request) => ({ status: 201, json: await createCommit(request) }),
  },
  {
    method: "POST",
    template: "/repos/{owner}/{repo}/git/refs",
    auth: "installation",
    handle: async (request) => ({ status: 201, json: await createRef(request) }),
  },
];
