import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git, HARNESS_IDENTITY } from "../../../src/workspace/index.js";
import { branchHead, createBareRepository, knownCommit, parseCatFileBatch, readPath, readRefPath, resolveCommit } from "./repos.js";

describe("fake GitHub: branch heads and commits without a git process per question", () => {
  let root: string;
  let bare: string;
  let main: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "fake-github-refs-"));
    bare = await createBareRepository(root, { owner: "o", name: "r", files: { "a.txt": "a\n" } });
    main = (await resolveCommit(bare, "refs/heads/main")) ?? "";
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("reads a branch from its loose ref and from packed-refs, and as git does after each change", async () => {
    expect(main).toMatch(/^[0-9a-f]{40}$/);
    const story = await git(["commit-tree", `${main}^{tree}`, "-p", main, "-m", "story"], { cwd: bare, env: HARNESS_IDENTITY });
    await git(["update-ref", "refs/heads/harness/story-1", story], { cwd: bare });
    expect(await branchHead(bare, "harness/story-1")).toBe(story);
    await git(["pack-refs", "--all", "--prune"], { cwd: bare });
    expect(await branchHead(bare, "harness/story-1")).toBe(story);
    expect(await branchHead(bare, "main")).toBe(main);
    // Moved after packing: the loose ref wins, as in git.
    await git(["update-ref", "refs/heads/harness/story-1", main], { cwd: bare });
    expect(await branchHead(bare, "harness/story-1")).toBe(main);
    await git(["update-ref", "-d", "refs/heads/harness/story-1"], { cwd: bare });
    expect(await branchHead(bare, "harness/story-1")).toBeNull();
    expect(await branchHead(bare, "harness")).toBeNull();
    expect(await branchHead(bare, "missing")).toBeNull();
  });

  it("asks git for a name that is not plain, and never reads outside refs/heads", async () => {
    expect(await branchHead(bare, "../../HEAD")).toBeNull();
    expect(await branchHead(bare, "main..main")).toBeNull();
    expect(await branchHead(bare, "-main")).toBeNull();
  });

  it("knows a commit by its full id, and refuses ids that name no commit", async () => {
    expect(await knownCommit(bare, main)).toBe(main);
    expect(await knownCommit(bare, main.toUpperCase())).toBe(main);
    expect(await knownCommit(bare, "0".repeat(40))).toBeNull();
    const tree = await git(["rev-parse", `${main}^{tree}`], { cwd: bare, readOnly: true });
    expect(await knownCommit(bare, tree)).toBeNull();
  });

  it("reads a path at a ref with one git process, answering as resolveCommit then readPath do", async () => {
    const nested = await createBareRepository(root, { owner: "o", name: "nested", files: { "a.txt": "a\n", "d/e.txt": "e\nf\n", "d/g/h.txt": "" } });
    const head = (await resolveCommit(nested, "main")) ?? "";
    const tree = await git(["rev-parse", `${head}^{tree}`], { cwd: nested, readOnly: true });
    await git(["tag", "v1", head], { cwd: nested });
    const refs = ["main", "refs/heads/main", "v1", head, head.slice(0, 12), tree, "missing", "-main", "main:a.txt", "main\nmain"];
    const paths = ["a.txt", "/d/e.txt/", "d", "", "/", "d/g/h.txt", "d/missing", "a.txt/b", "d/e.txt\n"];
    for (const ref of refs) {
      const commit = await resolveCommit(nested, ref);
      for (const path of paths) {
        const expected = { commit, entry: commit ? await readPath(nested, commit, path) : { kind: "missing" } };
        expect({ ref, path, ...(await readRefPath(nested, ref, path)) }).toEqual({ ref, path, ...expected });
      }
    }
    expect((await readRefPath(nested, "main", "d/e.txt")).entry).toMatchObject({ kind: "file", content: Buffer.from("e\nf\n") });
    expect((await readRefPath(nested, "main", "d")).entry).toMatchObject({
      kind: "dir",
      entries: [
        { name: "e.txt", type: "file" },
        { name: "g", type: "dir" },
      ],
    });
  });

  it("splits cat-file --batch output into its answers, an empty object and a missing one included", () => {
    const a = "a".repeat(40);
    const b = "b".repeat(64);
    const output = Buffer.from(`${a} blob 3\nx\ny\nwhat missing\n${b} blob 0\n\nref ambiguous\n`);
    expect(parseCatFileBatch(output)).toEqual([
      { sha: a, type: "blob", content: Buffer.from("x\ny") },
      undefined,
      { sha: b, type: "blob", content: Buffer.alloc(0) },
      undefined,
    ]);
    expect(parseCatFileBatch(Buffer.alloc(0))).toEqual([]);
    expect(() => parseCatFileBatch(Buffer.from(`${a} blob 3`))).toThrow("ended inside a header");
  });
});
