/**
 * What `harness clean-clone` adds around the check for a person at a terminal: the
 * repository's own `.github/harness.yml` (its `test` and `clean_clone` keys, under the flags),
 * and a one-line verdict that, on a failure, names the files the commit left out (ignored or
 * untracked in the user's eyes), the usual cause of a suite that passes in the tree only.
 */
import { join } from "node:path";
import { readBoundedText, UnsafeFileError } from "../files/index.js";
import { ConfigError, parseHarnessConfig, type HarnessConfig } from "../pipeline/index.js";
import { SchemaValidationError } from "../schema/index.js";
import { gitResult, type CleanCloneResult, type UserGitSettings } from "../workspace/index.js";
import { UsageError } from "./usage.js";

/** The configuration file is small; a larger one is not read. */
const CONFIG_MAX_BYTES = 1024 * 1024;

/** The repository's configuration, or undefined when it has none; a bad one is a usage error naming the file and key. */
export async function repositoryConfig(repo: string, usage: string): Promise<HarnessConfig | undefined> {
  const top = await gitResult(["rev-parse", "--show-toplevel"], { cwd: repo, readOnly: true });
  if (top.exitCode !== 0) return undefined; // not a repository: the check says so itself
  const file = join((top.stdout ?? Buffer.alloc(0)).toString("utf8").trim(), ".github", "harness.yml");
  let text: string;
  try {
    text = await readBoundedText(file, { maxBytes: CONFIG_MAX_BYTES });
  } catch (error) {
    if (error instanceof UnsafeFileError && error.reason === "missing") return undefined;
    if (error instanceof UnsafeFileError) throw new UsageError(`${file} ${error.detail}`, usage);
    throw error;
  }
  try {
    return parseHarnessConfig(text, file);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof SchemaValidationError) throw new UsageError(error.message, usage);
    throw error;
  }
}

/** Dependency folders a provisioned clone installs afresh, at any depth (a workspace's packages have their own). */
const PROVISIONED_ROOTS = new Set(["node_modules", ".venv"]);

/**
 * Files of the working tree that `git add -A` leaves out (ignored), folders collapsed: the
 * dependency folders the clone was given (linked, or installed afresh when `provisioned`) are
 * not counted, nor anything inside a folder already listed (git lists both `tests/data/` and
 * `tests/data/fixture.txt` when `tests/` is untracked), so the cause is not buried under them.
 */
export async function leftOutFiles(repo: string, linked: readonly string[], userGit: UserGitSettings | undefined, provisioned = false): Promise<string[]> {
  const config = userGit?.excludesFile !== undefined ? ["-c", `core.excludesFile=${userGit.excludesFile}`] : [];
  const result = await gitResult([...config, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], { cwd: repo, readOnly: true });
  if (result.exitCode !== 0) return [];
  const roots = new Set(linked.map((name) => `${name.replace(/\/+$/, "")}/`));
  const paths = (result.stdout ?? Buffer.alloc(0))
    .toString("utf8")
    .split("\0")
    .filter((path) => path !== "" && !roots.has(path))
    .filter((path) => !(provisioned && path.split("/").some((segment) => PROVISIONED_ROOTS.has(segment))));
  const folders = paths.filter((path) => path.endsWith("/"));
  return paths.filter((path) => !folders.some((folder) => folder !== path && path.startsWith(folder)));
}

/**
 * The files whose uncommitted state the checked commit holds (changed, added, deleted or new),
 * as `git status` lists them: on a failure they say whether the change or the base is to blame.
 */
export async function changedFiles(repo: string, userGit: UserGitSettings | undefined): Promise<string[]> {
  const config = userGit?.excludesFile !== undefined ? ["-c", `core.excludesFile=${userGit.excludesFile}`] : [];
  const result = await gitResult([...config, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"], { cwd: repo, readOnly: true });
  if (result.exitCode !== 0) return [];
  // Each entry is "XY path"; with --no-renames no entry carries a second path.
  return (result.stdout ?? Buffer.alloc(0))
    .toString("utf8")
    .split("\0")
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3));
}

/** Up to eight names, then how many more. */
function someOf(paths: readonly string[]): string {
  const more = paths.length > 8 ? ` and ${paths.length - 8} more` : "";
  return `${paths.slice(0, 8).join(", ")}${more}`;
}

/** The one line a person reads first. */
export function verdictLine(result: CleanCloneResult, leftOut: readonly string[], changed: readonly string[] = []): string {
  const commit = result.commit !== undefined ? ` of ${result.commit.slice(0, 12)}` : "";
  if (!result.ran) return `harness clean-clone: did not run: ${result.reason ?? "unknown reason"}`;
  if (result.timedOut) return `harness clean-clone: timed out: \`${result.command}\` did not finish in a clean clone${commit}`;
  if (result.exitCode === 0) return `harness clean-clone: passed: \`${result.command}\` exits 0 in a clean clone${commit}`;
  const holds = changed.length > 0 ? ` (HEAD with your uncommitted changes to ${someOf(changed)})` : " (HEAD as committed: no uncommitted changes)";
  const hint = leftOut.length > 0 ? `; left out of the commit (ignored): ${someOf(leftOut)}` : "";
  return `harness clean-clone: failed: \`${result.command}\` exits ${result.exitCode ?? "?"} in a clean clone${commit}${holds}${hint}`;
}
