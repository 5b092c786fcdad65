/**
 * `git add -A` without entering nested repositories. For a gitlink whose commit has not moved,
 * `git add` asks the nested repository whether it is dirty by running `git status` inside it,
 * and that status reads the nested `.git/config`, `.gitattributes` and `info/attributes`: files
 * an agent can write, where a `filter.<name>.clean` would run as the App. No setting turns the
 * question off for `git add` (it ignores `diff.ignoreSubmodules` and `submodule.<name>.ignore`),
 * so the gitlinks are kept out of its pathspec; one whose commit moved, or that was removed, is
 * found with `diff-files --ignore-submodules=dirty` (which compares the nested HEAD with the
 * index and asks nothing more) and staged on its own, where git no longer asks for a status.
 */
import { git, gitBytes, splitNul, type GitOptions } from "./git.js";

/** The gitlinks the index records (`git ls-files --stage`: mode 160000), paths relative to the top. */
export async function indexGitlinks(options: GitOptions, config: readonly string[] = []): Promise<string[]> {
  const bytes = await gitBytes([...config, "ls-files", "--stage", "-z", "--full-name", "--", ":/"], { ...options, readOnly: true });
  return splitNul(bytes)
    .filter((entry) => entry.startsWith("160000 "))
    .map((entry) => entry.slice(entry.indexOf("\t") + 1));
}

/** A pathspec naming exactly `path` from the top of the working tree. */
function literal(path: string, exclude = false): string {
  return `:(top,literal${exclude ? ",exclude" : ""})${path}`;
}

/**
 * Stages every change of the working tree at `options.cwd` as `git add -A` would, narrowed by
 * `pathspec` (git's own pathspec; everything when empty), without running git in any nested
 * repository. Pathspecs travel on stdin, so any number of gitlinks fits. `config` (`-c` pairs)
 * goes to every git call.
 */
export async function stageAll(options: GitOptions, pathspec: readonly string[] = [], config: readonly string[] = []): Promise<void> {
  const gitlinks = await indexGitlinks(options, config);
  // No pathspec at all where none is needed: any pathspec, even exclusions alone, that covers a
  // skip-worktree entry makes `add` exit 1 (a sparse checkout with gitlinks still does).
  const specs = [...pathspec, ...gitlinks.map((path) => literal(path, true))];
  if (specs.length === 0) await git([...config, "add", "-A"], options);
  else await git([...config, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], { ...options, input: `${specs.join("\0")}\0` });
  if (gitlinks.length === 0) return;
  // diff-files takes no pathspec file; a repository has few gitlinks.
  const moved = splitNul(
    await gitBytes([...config, "diff-files", "--ignore-submodules=dirty", "--name-only", "-z", "--", ...gitlinks.map((path) => literal(path))], {
      ...options,
      readOnly: true,
    }),
  );
  if (moved.length === 0) return;
  await git([...config, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], {
    ...options,
    input: `${moved.map((path) => literal(path)).join("\0")}\0`,
  });
}
