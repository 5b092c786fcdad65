/** The receipt's lines in the repository's `info/exclude`: exactly what is appended, and when nothing is. */
import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { excludeReceipt, git, GitError, PROVISION_RECEIPT } from "../../src/workspace/index.js";
import { addWorktree, initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

const LINES = `/${PROVISION_RECEIPT}\n/${PROVISION_RECEIPT}.*.tmp\n`;

async function repoWithExclude(exclude: string | undefined): Promise<{ repo: string; excludePath: string }> {
  const repo = join(makeTempDir("harness-exclude-"), "repo");
  await initRepo(repo, { "README.md": "hello\n" });
  const excludePath = join(repo, ".git", "info", "exclude");
  rmSync(join(repo, ".git", "info"), { recursive: true, force: true });
  if (exclude !== undefined) {
    mkdirSync(join(repo, ".git", "info"));
    writeFileSync(excludePath, exclude);
  }
  return { repo, excludePath };
}

/** This process's open descriptors on `path`. */
const openOn = (path: string): string[] =>
  readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path ? [fd] : [];
    } catch {
      return [];
    }
  });

describe("excludeReceipt", () => {
  it.each<[string, string | undefined, string]>([
    ["no info folder at all", undefined, LINES],
    ["an empty exclude file", "", LINES],
    ["an exclude file ending in a newline", "# mine\n*.log\n", `# mine\n*.log\n${LINES}`],
    ["an exclude file without a final newline", "# mine\n*.log", `# mine\n*.log\n${LINES}`],
  ])("with %s appends the receipt and its temp files, once", async (_case, before, after) => {
    const { repo, excludePath } = await repoWithExclude(before);
    await excludeReceipt(repo);
    expect(readFileSync(excludePath, "utf8")).toBe(after);
    await excludeReceipt(repo);
    expect(readFileSync(excludePath, "utf8")).toBe(after);
    expect(openOn(excludePath)).toEqual([]);
  });

  it("with an info folder but no exclude file creates the file", async () => {
    const { repo, excludePath } = await repoWithExclude(undefined);
    mkdirSync(join(repo, ".git", "info"));
    await excludeReceipt(repo);
    expect(readFileSync(excludePath, "utf8")).toBe(LINES);
  });

  it("appends only the line that is missing; a present line with trailing blanks (which git ignores) counts", async () => {
    const { repo, excludePath } = await repoWithExclude(`/${PROVISION_RECEIPT}   \n`);
    await excludeReceipt(repo);
    expect(readFileSync(excludePath, "utf8")).toBe(`/${PROVISION_RECEIPT}   \n/${PROVISION_RECEIPT}.*.tmp\n`);
  });

  it("at a linked worktree's top lists the receipt in the common folder's exclude, which git then honours there", async () => {
    const { repo, excludePath } = await repoWithExclude("");
    const linked = await addWorktree(repo, join(makeTempDir("harness-exclude-linked-"), "linked"));
    await excludeReceipt(linked);
    expect(readFileSync(excludePath, "utf8")).toBe(LINES);
    writeFileSync(join(linked, PROVISION_RECEIPT), "{}\n");
    expect(await git(["status", "--porcelain"], { cwd: linked })).toBe("");
  });

  it("does nothing in a folder that is not a repository, and fails on any other git failure", async () => {
    const plain = makeTempDir("harness-exclude-plain-");
    await expect(excludeReceipt(plain)).resolves.toBeUndefined();
    expect(readdirSync(plain)).toEqual([]);
    const { repo } = await repoWithExclude("");
    writeFileSync(join(repo, ".git", "config"), "[core\n");
    const error = await excludeReceipt(repo).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).kind).not.toBe("not-a-repository");
  });
});
