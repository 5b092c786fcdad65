import { join } from "node:path";
import { gitResult } from "../../src/workspace/index.js";
import { isValidBranchName } from "../../src/workspace/ref-name.js";
import { initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/** Names each rule is about, and their near misses. */
const HAND_PICKED = [
  "main",
  "harness/story-12",
  "feature/a/b/c",
  "a",
  "x.y",
  "a-b_c",
  "ünïcode/branch",
  "日本語",
  "a@b",
  "@a",
  "a@",
  "@@",
  "a{b}",
  "a}b",
  "a!b",
  "a#b",
  "a%b",
  "a&b",
  "a(b)",
  "a'b",
  'a"b',
  "a<b>",
  "a|b",
  "a;b",
  "a=b",
  "a+b",
  "a,b",
  "a$b",
  "",
  "@",
  "HEAD",
  "head",
  "HEADS",
  "xHEAD",
  "HEAD/x",
  "x/HEAD",
  "-",
  "-a",
  "a-",
  "--x",
  "a/-b",
  ".",
  "..",
  ".a",
  "a/.b",
  "a.",
  "a/b.",
  "a..b",
  "a/../b",
  "a/./b",
  "a.b.c",
  "a/.",
  "a/..",
  "a.lock",
  "a/b.lock",
  "a.lock/b",
  ".lock",
  "a.LOCK",
  "a.lockx",
  "a.loc",
  "lock",
  "a/lock",
  "/a",
  "a/",
  "a//b",
  "//",
  "/",
  "a b",
  "a\tb",
  "a\nb",
  "a\x01b",
  "a\x1fb",
  "a\x7fb",
  "a~b",
  "a^b",
  "a:b",
  "a?b",
  "a*b",
  "a[b",
  "a]b",
  "a\\b",
  "a@{b",
  "@{",
  "@{-1}",
  "@{u}",
  "a@{",
  "{a",
  "a{",
  "a@}",
];

/** Every pair of these pieces, so each rule meets the others and the separators. */
const PIECES = ["a", ".", "..", "/", "-", "@", "{", "@{", ".lock", "lock", " ", "~", "é", "HEAD", "x.", "*"];

function corpus(): string[] {
  const names = new Set(HAND_PICKED);
  for (const first of PIECES) for (const second of PIECES) names.add(first + second);
  for (const first of PIECES) names.add(`ref/${first}/end`);
  return [...names];
}

describe("isValidBranchName", () => {
  it("agrees with `git check-ref-format --branch` on every name of the corpus", async () => {
    const repo = join(makeTempDir(), "repo");
    await initRepo(repo, { "README.md": "x\n" });
    const names = corpus();
    const disagreements: string[] = [];
    // A few at a time: one git process per name.
    for (let index = 0; index < names.length; index += 8) {
      await Promise.all(
        names.slice(index, index + 8).map(async (name) => {
          const byGit = (await gitResult(["check-ref-format", "--branch", name], { cwd: repo, readOnly: true })).exitCode === 0;
          if (byGit !== isValidBranchName(name)) disagreements.push(`${JSON.stringify(name)}: git ${byGit ? "accepts" : "refuses"}`);
        }),
      );
    }
    expect(names.length).toBeGreaterThan(300);
    expect(disagreements).toEqual([]);
  }, 120_000);

  it("accepts the harness's own story branches and refuses what would be an option", () => {
    expect(isValidBranchName("harness/story-42")).toBe(true);
    expect(isValidBranchName("-b")).toBe(false);
    expect(isValidBranchName("--force")).toBe(false);
  });
});
