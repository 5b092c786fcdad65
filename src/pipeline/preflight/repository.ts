/** What preflight reads from the commit a story starts from: the files at its root. */
import { gitBytes, splitNul } from "../../workspace/index.js";

/** One entry of the commit's tree (mode as git prints it: 100755 is an executable file). */
export interface TreeEntry {
  mode: string;
  path: string;
}

/** The commit a story starts from, in a local repository. */
export interface StoryBase {
  repoDir: string;
  ref: string;
}

/**
 * Lists the entries of `ref` at `paths` (the root's entries when none are given), without
 * a checkout: preflight runs before any worktree exists. An unknown ref gives no entries.
 */
export async function treeEntries(base: StoryBase, paths: readonly string[] = []): Promise<TreeEntry[]> {
  let bytes: Buffer;
  try {
    bytes = await gitBytes(["ls-tree", "-z", `${base.ref}^{tree}`, "--", ...paths], { cwd: base.repoDir, readOnly: true });
  } catch {
    return [];
  }
  return splitNul(bytes).map((line) => {
    const tab = line.indexOf("\t");
    return { mode: line.slice(0, line.indexOf(" ")), path: line.slice(tab + 1) };
  });
}
