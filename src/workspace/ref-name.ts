/**
 * Branch names checked in this process by git's own rules (`git check-ref-format --branch`,
 * refs.c `check_refname_format` on `refs/heads/<name>`), one git process less per story. The
 * rules, for every `/`-separated component of the name: not empty, not beginning with `.`, not
 * ending with `.lock`; nowhere `..`, `@{`, an ASCII control character, DEL, a space or any of
 * `~ ^ : ? * [ \`; the whole name not ending with `.`, not `HEAD`, and not beginning with `-`.
 * (`@` alone is refused as a whole refname only: `refs/heads/@` is a valid branch.)
 * `--branch` would also expand `@{-1}` to the branch checked out before; that is a name with
 * `@{`, refused here, as the harness never asks for the previous branch.
 * test/workspace/ref-name.test.ts compares this with git over a corpus.
 */

/** Characters git refuses anywhere in a ref name: controls, space, DEL and `~ ^ : ? * [ \`. */
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\x00-\x20\x7f~^:?*[\\]/;

/** True when `name` is a valid branch name (`git check-ref-format --branch` would accept it). */
export function isValidBranchName(name: string): boolean {
  if (name.startsWith("-") || name === "HEAD") return false;
  if (FORBIDDEN.test(name) || name.includes("..") || name.includes("@{") || name.endsWith(".")) return false;
  return name.split("/").every((component) => component !== "" && !component.startsWith(".") && !component.endsWith(".lock"));
}
