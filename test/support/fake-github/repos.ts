import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { git, gitBytes, gitResult, HARNESS_IDENTITY } from "../../../src/workspace/index.js";

/** What a test asks for: a repository with these files on its default branch. */
export interface RepositorySpec {
  owner: string;
  name: string;
  /** Path → content of the first commit. */
  files: Record<string, string>;
  defaultBranch?: string;
  /** Paths committed with the executable bit. */
  executable?: string[];
}

const FIXED_DATES = { GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z", GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z" };

/**
 * Creates `<root>/<owner>/<name>.git`, a bare repository whose default branch holds `files` in
 * one commit, with smart-HTTP pushes allowed (`http.receivepack`).
 */
export async function createBareRepository(root: string, spec: RepositorySpec): Promise<string> {
  const branch = spec.defaultBranch ?? "main";
  const bareDir = join(root, spec.owner, `${spec.name}.git`);
  await mkdir(bareDir, { recursive: true });
  await git(["init", "--bare", "--quiet", `--initial-branch=${branch}`, bareDir], { cwd: root });
  await git(["config", "http.receivepack", "true"], { cwd: bareDir });
  const work = await mkdtemp(join(tmpdir(), "fake-github-seed-"));
  try {
    await git(["init", "--quiet", `--initial-branch=${branch}`, work], { cwd: root });
    for (const [path, content] of Object.entries(spec.files)) {
      const target = join(work, path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
      if (spec.executable?.includes(path)) await chmod(target, 0o755);
    }
    await git(["add", "-A"], { cwd: work });
    await git(["commit", "--quiet", "--allow-empty", "-m", "Initial commit"], { cwd: work, env: { ...HARNESS_IDENTITY, ...FIXED_DATES } });
    await git(["push", "--quiet", bareDir, `HEAD:refs/heads/${branch}`], { cwd: work });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return bareDir;
}

/** The commit a ref (branch name, full ref or sha) names, or null when it names none. */
export async function resolveCommit(bareDir: string, ref: string): Promise<string | null> {
  if (ref.startsWith("-")) return null;
  const result = await gitResult(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: bareDir, readOnly: true });
  return result.exitCode === 0 ? (result.stdout?.toString("utf8").trim() ?? null) : null;
}

/** Full commit ids found in each repository: a commit git has stays there (the fake never collects unreachable objects this young). */
const foundCommits = new Map<string, Set<string>>();

/**
 * The commit a full object id names, or null: like {@link resolveCommit}, with one git process
 * per id and repository rather than one per question (a story's reports name the same few
 * commits dozens of times, and the fake's processes load the machine the benchmarks measure).
 */
export async function knownCommit(bareDir: string, sha: string): Promise<string | null> {
  const id = sha.toLowerCase();
  if (!/^[0-9a-f]{40}$/.test(id)) return resolveCommit(bareDir, sha);
  if (foundCommits.get(bareDir)?.has(id)) return id;
  const commit = await resolveCommit(bareDir, id);
  if (commit === id) {
    const found = foundCommits.get(bareDir) ?? new Set<string>();
    found.add(id);
    foundCommits.set(bareDir, found);
  }
  return commit;
}

/** A branch name whose ref file can be read directly: nothing that could leave `refs/heads/` or that git would refuse. */
const PLAIN_BRANCH = /^(?!.*(?:\.\.|\/\/|\.lock(?:\/|$)|\/\.|^\.|\/$))[A-Za-z0-9._/-]+$/;

/**
 * The head of a branch, or null when the branch does not exist. Read from the ref's file, or
 * from `packed-refs`, as git stores a branch (a branch names a commit: git refuses anything
 * else there), instead of a git process per question: the fake answers it for every pull
 * request it shows and every poll of a test, and its processes load the machine the
 * benchmarks measure. A name that is not plain is asked of git.
 */
export async function branchHead(bareDir: string, branch: string): Promise<string | null> {
  const ref = `refs/heads/${branch}`;
  if (!PLAIN_BRANCH.test(branch)) return resolveCommit(bareDir, ref);
  const loose = await readFile(join(bareDir, ref), "utf8").catch(() => undefined);
  if (loose !== undefined) {
    const sha = loose.trim();
    return /^[0-9a-f]{40}$/.test(sha) ? sha : resolveCommit(bareDir, ref);
  }
  const packed = await readFile(join(bareDir, "packed-refs"), "utf8").catch(() => "");
  for (const line of packed.split("\n")) {
    if (line.endsWith(` ${ref}`) && /^[0-9a-f]{40} /.test(line)) return line.slice(0, 40);
  }
  return null;
}

/** How many commits `head` has that `base` does not. */
export async function commitsAhead(bareDir: string, base: string, head: string): Promise<number> {
  return Number(await git(["rev-list", "--count", `${base}..${head}`], { cwd: bareDir, readOnly: true }));
}

/** An entry of a tree at a commit: a file's bytes, a folder's listing, or nothing. */
export type TreeEntry =
  { kind: "file"; sha: string; content: Buffer } | { kind: "dir"; entries: { name: string; type: "file" | "dir"; sha: string }[] } | { kind: "missing" };

/** One object of `git cat-file --batch`'s answer: its header's id and type, and its bytes; undefined for `<request> missing` (or ambiguous). */
interface BatchObject {
  sha: string;
  type: string;
  content: Buffer;
}

/** Splits `git cat-file --batch` output into its answers, one per request line, in order. */
export function parseCatFileBatch(output: Buffer): (BatchObject | undefined)[] {
  const answers: (BatchObject | undefined)[] = [];
  let at = 0;
  while (at < output.length) {
    const lineEnd = output.indexOf(0x0a, at);
    if (lineEnd < 0) throw new Error("fake-github: git cat-file --batch ended inside a header");
    const header = output.subarray(at, lineEnd).toString("utf8");
    const object = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(header);
    if (!object) {
      answers.push(undefined);
      at = lineEnd + 1;
      continue;
    }
    const size = Number(object[3]);
    answers.push({ sha: object[1] ?? "", type: object[2] ?? "", content: output.subarray(lineEnd + 1, lineEnd + 1 + size) });
    // The object's bytes are followed by a line feed.
    at = lineEnd + 1 + size + 1;
  }
  return answers;
}

/**
 * The commit `ref` names and what `path` holds there, like {@link resolveCommit} then
 * {@link readPath}, asked of one `git cat-file --batch` instead of four processes (the App
 * reads its configuration through the contents API for every story). A ref or path that
 * would not fit on one request line, or a ref holding `:`, is asked the long way.
 */
export async function readRefPath(bareDir: string, ref: string, path: string): Promise<{ commit: string | null; entry: TreeEntry }> {
  const clean = path.replace(/^\/+|\/+$/g, "");
  if (ref.startsWith("-") || /[\n\r:]/.test(ref) || /[\n\r]/.test(clean)) {
    const commit = await resolveCommit(bareDir, ref);
    return { commit, entry: commit ? await readPath(bareDir, commit, path) : { kind: "missing" } };
  }
  const spec = clean === "" ? `${ref}^{commit}^{tree}` : `${ref}^{commit}:${clean}`;
  const [commit, object] = parseCatFileBatch(await gitBytes(["cat-file", "--batch"], { cwd: bareDir, readOnly: true, input: `${ref}^{commit}\n${spec}\n` }));
  if (!commit) return { commit: null, entry: { kind: "missing" } };
  if (object?.type === "blob") return { commit: commit.sha, entry: { kind: "file", sha: object.sha, content: Buffer.from(object.content) } };
  if (object?.type !== "tree") return { commit: commit.sha, entry: { kind: "missing" } };
  return { commit: commit.sha, entry: await listTree(bareDir, object.sha) };
}

/** Reads `path` at `commit` from a bare repository. */
export async function readPath(bareDir: string, commit: string, path: string): Promise<TreeEntry> {
  const clean = path.replace(/^\/+|\/+$/g, "");
  const spec = clean === "" ? `${commit}^{tree}` : `${commit}:${clean}`;
  const type = await gitResult(["cat-file", "-t", spec], { cwd: bareDir, readOnly: true });
  if (type.exitCode !== 0) return { kind: "missing" };
  const kind = type.stdout?.toString("utf8").trim();
  const sha = await git(["rev-parse", spec], { cwd: bareDir, readOnly: true });
  if (kind === "blob") return { kind: "file", sha, content: await gitBytes(["cat-file", "blob", sha], { cwd: bareDir, readOnly: true }) };
  if (kind !== "tree") return { kind: "missing" };
  return listTree(bareDir, sha);
}

/** A tree's entries. */
async function listTree(bareDir: string, sha: string): Promise<TreeEntry> {
  const listing = (await gitBytes(["ls-tree", "-z", sha], { cwd: bareDir, readOnly: true })).toString("utf8");
  const entries = listing
    .split("\0")
    .filter(Boolean)
    .map((line) => {
      const [meta = "", name = ""] = line.split("\t");
      const [, objectType, objectSha = ""] = meta.split(" ");
      return { name, type: objectType === "tree" ? ("dir" as const) : ("file" as const), sha: objectSha };
    });
  return { kind: "dir", entries };
}
