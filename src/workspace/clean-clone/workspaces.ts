/**
 * Workspaces repositories (npm and yarn `workspaces` in package.json, pnpm's
 * pnpm-workspace.yaml) install their own packages as links into `node_modules`
 * (`node_modules/@x/a -> ../../packages/a`). A linked `node_modules` would lead those links back
 * into the user's working tree, so the clean clone of such a repository is provisioned afresh
 * instead of refused: the links an install makes in the clone point into the clone.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readBoundedText, UnsafeFileError } from "../../files/index.js";

/** A package.json is a page; one larger than this is not read for workspaces. */
const PACKAGE_JSON_MAX_BYTES = 1024 * 1024;

function nonEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

/**
 * What declares the workspaces of the checkout at `dir` (`"package.json"` or
 * `"pnpm-workspace.yaml"`), or undefined when it has none.
 */
export async function declaredWorkspaces(dir: string): Promise<string | undefined> {
  if (existsSync(join(dir, "pnpm-workspace.yaml"))) return "pnpm-workspace.yaml";
  let text: string;
  try {
    text = await readBoundedText(join(dir, "package.json"), { maxBytes: PACKAGE_JSON_MAX_BYTES });
  } catch (error) {
    if (error instanceof UnsafeFileError || (error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return undefined;
  }
  const workspaces = (manifest as { workspaces?: unknown } | null)?.workspaces;
  // npm and yarn take a list; yarn also `{ packages: [...] }`.
  const declared = nonEmptyList(workspaces) || nonEmptyList((workspaces as { packages?: unknown } | null | undefined)?.packages);
  return declared ? "package.json" : undefined;
}

/** The warning a result carries when the clone was provisioned because of its workspaces. */
export function workspacesWarning(declaredIn: string): string {
  return `workspaces (${declaredIn}): the clean clone was provisioned afresh instead of linking node_modules, whose workspace links lead back into the working tree`;
}
