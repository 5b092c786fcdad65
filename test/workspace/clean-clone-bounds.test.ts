/**
 * A clean clone that cannot be built says why in a bounded detail: it becomes the result's
 * `reason`, a journal record and a retried implementer's context, and git's words or the
 * harness's own list of refusals can be any length.
 */
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { buildCleanClone, CLEAN_CLONE_DETAIL_BYTES, CleanCloneBuildError, runCleanCloneCheck } from "../../src/workspace/index.js";
import { removeTemps, repoWith, run, temp, write } from "./clean-clone-fixtures.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

afterAll(removeTemps);

const bytes = (text: string): number => Buffer.byteLength(text, "utf8");

async function buildError(repo: string): Promise<CleanCloneBuildError> {
  const error: unknown = await buildCleanClone({ repo, scratchDir: temp("cc-bound-"), links: [] }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CleanCloneBuildError);
  return error as CleanCloneBuildError;
}

describe("a clean-clone build error's detail", () => {
  it("keeps the end of git's words within the bound when git's error is longer (a clean filter with a 20,000-character command fails)", async () => {
    const repo = await repoWith({ ".gitattributes": "*.dat filter=huge\n", "a.dat": "one\n" });
    // Git names the failing filter by its command line, twice, in its last lines.
    await run(repo, "config", "filter.huge.clean", `false #${"x".repeat(20_000)}`);
    await run(repo, "config", "filter.huge.required", "true");
    write(repo, { "a.dat": "two\n" });
    const error = await buildError(repo);
    expect(error.step).toBe("commit");
    expect(bytes(error.detail)).toBeLessThanOrEqual(CLEAN_CLONE_DETAIL_BYTES);
    expect(error.detail.startsWith("... ")).toBe(true);
    expect(error.detail).toMatch(/a\.dat: clean filter 'huge' failed$/);

    const result = await runCleanCloneCheck({ sandbox, repo, command: "true", links: [], scratchRoot: temp("cc-bound-root-") });
    expect(result.ran).toBe(false);
    expect(bytes(result.reason ?? "")).toBeLessThanOrEqual(CLEAN_CLONE_DETAIL_BYTES + bytes(`clean clone of ${repo} could not be built (commit): `));
  });

  it("names the first refusals whole and counts the rest when a change adds hundreds of external symlinks", async () => {
    const repo = await repoWith({ "a.txt": "one\n" });
    for (let index = 0; index < 300; index += 1) symlinkSync(`/etc/hosts-${"y".repeat(40)}-${index}`, join(repo, `link-${index}`));
    const error = await buildError(repo);
    expect(error.step).toBe("refuse");
    expect(bytes(error.detail)).toBeLessThanOrEqual(CLEAN_CLONE_DETAIL_BYTES);
    expect(error.detail.startsWith("the commit cannot be checked out as it stands here: the symlink link-0 points to")).toBe(true);
    const named = error.detail.split("; ").filter((sentence) => sentence.includes("the symlink link-")).length;
    expect(named).toBeGreaterThan(5);
    expect(error.detail.endsWith(`; … and ${300 - named} more`)).toBe(true);
  });

  it("is whole when it fits", async () => {
    const repo = await repoWith({ "a.txt": "one\n" });
    symlinkSync("/etc/hosts", join(repo, "hosts"));
    const error = await buildError(repo);
    expect(error.detail).toBe(
      'the commit cannot be checked out as it stands here: the symlink hosts points to "/etc/hosts", an absolute path outside the repository: it resolves on this machine only and dangles in any other checkout (allow it with --allow-external-symlinks or clean_clone.allow_external_symlinks)',
    );
  });
});
