import { cpSync } from "node:fs";
import { join } from "node:path";
import { execShell } from "../../src/exec/index.js";
import { buildCleanClone, CleanCloneBuildError, runCleanCloneCheck } from "../../src/workspace/index.js";
import { CORPUS, type CorpusCase } from "./clean-clone-corpus.js";
import { look, observe, removeTemps, run, temp } from "./clean-clone-fixtures.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

afterAll(removeTemps);

/** The tree a real `git add -A && git commit` records, made in a throwaway copy of the target. */
async function realCommitTree(target: string): Promise<string> {
  const copy = join(temp("cc-copy-"), "repo");
  cpSync(target, copy, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  await run(copy, "add", "-A");
  await run(copy, "commit", "-q", "--allow-empty", "--no-verify", "-m", "the user's commit");
  return look(copy, "rev-parse", "HEAD^{tree}");
}

/** The tree the check built: from its suite's output, or from the refusal. */
async function checkTree(target: string, entry: CorpusCase): Promise<{ tree: string; verdict: string; reason?: string }> {
  if (entry.verdict === "refused") {
    const error = await buildCleanClone({ repo: target, scratchDir: temp("cc-scratch-"), links: [] }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    if (!(error instanceof CleanCloneBuildError)) throw new Error(`${entry.name}: expected a refusal, got ${String(error)}`);
    return { tree: error.tree ?? "", verdict: error.step === "refuse" ? "refused" : error.step, reason: error.message };
  }
  const result = await runCleanCloneCheck({ sandbox, repo: target, command: `git rev-parse HEAD^{tree}; ${entry.assertion}`, links: [] });
  if (!result.ran) throw new Error(`${entry.name}: did not run: ${result.reason ?? ""}`);
  const tree = (result.outputTail ?? "").split("\n")[0] ?? "";
  return { tree, verdict: result.exitCode === 0 ? "passes" : "fails" };
}

describe("clean-clone corpus: the check's commit is the user's commit, checked out as CI gets it", () => {
  it.each(CORPUS.map((entry) => [entry.name, entry] as const))(
    "%s",
    async (_name, entry) => {
      const target = await entry.build();
      // The case is live: its assertion holds where the user stands.
      const here = await execShell(entry.assertion, { cwd: target, timeoutMs: 60_000 });
      expect({ assertionInWorkingTree: here.exitCode, tail: here.tail }).toEqual({ assertionInWorkingTree: 0, tail: here.tail });
      const before = await observe(target);

      const check = await checkTree(target, entry);

      expect(check.verdict).toBe(entry.verdict);
      if (entry.reason) expect(check.reason).toMatch(entry.reason);
      expect(await observe(target)).toEqual(before);
      expect(check.tree).toBe(await realCommitTree(target));
      // A deadline against hangs only: the 60 MB and 3,000-file cases copy a lot on a loaded machine.
    },
    300_000,
  );
});
