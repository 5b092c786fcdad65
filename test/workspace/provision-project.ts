/**
 * A repository with an npm lockfile and fake package managers for provisioning tests that need
 * real worktrees but no real install: the fake npm (and yarn) counts its runs, notes a
 * node_modules it found already there, runs `$RECORD_DIR/extra.sh` when a test wrote one, and
 * leaves `node_modules/left/index.js`, as `npm ci` would.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { provisionWorktree, type ProvisionArgs } from "../../src/workspace/index.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { addWorktree, initRepo, makeTempDir, writeFiles, type FileSpec } from "../support/tmp.js";
import { fakePath } from "./provision-fakes.js";

const FAKE_INSTALLER = `#!/bin/sh
name=$(basename "$0")
echo run >> "$RECORD_DIR/$name.count"
if [ -e node_modules ]; then echo "node_modules was there" >> "$RECORD_DIR/$name.found"; fi
mkdir -p node_modules/left && echo "module.exports = 1;" > node_modules/left/index.js
if [ -f "$RECORD_DIR/extra.sh" ]; then . "$RECORD_DIR/extra.sh"; fi
echo "$name installed"
`;

/**
 * Two cps that refuse every copy, one after making its target folder (`fail/`), one before and
 * with blanks around its message (`fail-early/`): put first on the App's PATH when linking and
 * saving must fail.
 */
const FAILING_CP = '#!/bin/sh\nmkdir -p "$4/partial"\necho "cp refused $1" >&2\nexit 1\n';
const FAILING_EARLY_CP = '#!/bin/sh\necho "  cp refused early" >&2\necho >&2\nexit 1\n';

export const DEFAULT_FILES: Record<string, FileSpec> = {
  "package.json": JSON.stringify({ name: "app", version: "1.0.0" }),
  "package-lock.json": "{}",
  ".gitignore": "node_modules\n",
};

/** A repository holding `files`, the fakes, a harness home, and worktrees made on demand. */
export async function project(files: Record<string, FileSpec> = DEFAULT_FILES) {
  const root = makeTempDir("harness-prov-project-");
  const repo = join(root, "repo");
  const bin = join(root, "bin");
  const records = join(root, "records");
  writeFiles(bin, {
    npm: { content: FAKE_INSTALLER, mode: 0o755 },
    yarn: { content: FAKE_INSTALLER, mode: 0o755 },
    "fail/cp": { content: FAILING_CP, mode: 0o755 },
    "fail-early/cp": { content: FAILING_EARLY_CP, mode: 0o755 },
  });
  mkdirSync(records);
  await initRepo(repo, files);
  const sandbox = new Sandbox({ ...sandboxSettingsFromEnv({}), readPaths: [bin], writePaths: [records] });
  const home = join(root, "home");
  let made = 0;
  /** A new worktree of the repository, with `files` written over its checkout. */
  const worktree = async (overwrite: Record<string, FileSpec> = {}): Promise<string> => {
    const path = await addWorktree(repo, join(root, `wt${(made += 1)}`));
    writeFiles(path, overwrite);
    return path;
  };
  const env = { set: { PATH: fakePath(bin), RECORD_DIR: records } };
  const provision = async (wt: string, more: Partial<ProvisionArgs> = {}) => {
    const logPath = join(root, "logs", "deep", `${wt.split("/").pop() ?? ""}.log`);
    const before = performance.now();
    const outcome = await provisionWorktree({ worktree: wt, taskId: "t", logPath, harnessHome: home, sandbox, config: { env }, ...more });
    return { outcome, logPath, took: performance.now() - before, log: (): string[] => readFileSync(logPath, "utf8").split("\n") };
  };
  const runs = (tool = "npm"): number =>
    existsSync(join(records, `${tool}.count`)) ? readFileSync(join(records, `${tool}.count`), "utf8").split("\n").length - 1 : 0;
  return { root, repo, bin, records, home, env, worktree, provision, runs };
}

/** Runs `body` with `dir` first on the App's own PATH (exec passes PATH through its allowlist). */
export async function withPathFirst<T>(dir: string, body: () => Promise<T>): Promise<T> {
  const saved = process.env.PATH;
  process.env.PATH = `${dir}:${saved ?? ""}`;
  try {
    return await body();
  } finally {
    process.env.PATH = saved;
  }
}
