/**
 * What cannot survive the trip from the user's working tree to a checkout elsewhere is refused
 * with a reason, never passed silently:
 * - a gitlink the change adds (an untracked nested repository, which `git add -A` records as a
 *   bare gitlink: a checkout has an empty folder where the tree had files) or moves (a changed
 *   submodule pointer: a clean clone has no submodule checkout to carry it);
 * - a symlink the change adds or retargets whose target lies outside the repository (absolute,
 *   or climbing above the root): it resolves on this machine only, unless the operator allows it.
 */
import { posix } from "node:path";
import { gitBytes } from "../git.js";
import { CLEAN_CLONE_STEP_TIMEOUT_MS } from "./limits.js";

const GITLINK = "160000";
const SYMLINK = "120000";

export interface TreeChange {
  oldMode: string;
  newMode: string;
  newObject: string;
  status: string;
  path: string;
}

/** Parses `git diff-tree -r -z --raw --no-renames` output. */
export function parseRawDiff(bytes: Buffer): TreeChange[] {
  const fields = bytes.toString("utf8").split("\0");
  const changes: TreeChange[] = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const header = fields[index] ?? "";
    const path = fields[index + 1] ?? "";
    // Stryker disable next-line Regex: the header's only colon is its first character (modes, ids and status hold none)
    const [oldMode = "", newMode = "", , newObject = "", status = ""] = header.replace(/^:/, "").split(" ");
    if (header === "") break;
    changes.push({ oldMode, newMode, newObject, status, path });
  }
  return changes;
}

/** Where a symlink stored at `path` with content `target` points, or undefined when inside the repository. */
export function outsideTarget(path: string, target: string): string | undefined {
  if (target.startsWith("/")) return "an absolute path";
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  if (resolved === ".." || resolved.startsWith("../")) return "a path above the repository root";
  return undefined;
}

/** Reads blobs by id (`cat-file --batch`) in one process. */
async function readBlobs(ids: readonly string[], cwd: string, env: Record<string, string>): Promise<Map<string, string>> {
  // Stryker disable next-line BooleanLiteral: cat-file takes no optional lock either way; readOnly says what the call promises
  const out = await gitBytes(["cat-file", "--batch"], { cwd, readOnly: true, env, input: `${ids.join("\n")}\n`, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS });
  const blobs = new Map<string, string>();
  let offset = 0;
  for (const id of ids) {
    const newline = out.indexOf(0x0a, offset);
    const [, , size = "0"] = out.subarray(offset, newline).toString("utf8").split(" ");
    const start = newline + 1;
    blobs.set(id, out.subarray(start, start + Number(size)).toString("utf8"));
    offset = start + Number(size) + 1;
  }
  return blobs;
}

export interface RefusalOptions {
  /** Symlinks pointing outside the repository are let through (they still dangle elsewhere). */
  allowExternalSymlinks?: boolean;
}

export interface Verdicts {
  /** What cannot survive the trip, one sentence naming each path; the check refuses when any. */
  refused: string[];
  /** What was let through on the operator's word but will not resolve elsewhere. */
  warnings: string[];
}

/**
 * Lists, as sentences naming each path, what in the change from `base` to `tree` cannot
 * survive a commit and a checkout elsewhere; both lists are empty when everything can.
 */
export async function refusals(base: string, tree: string, cwd: string, env: Record<string, string>, options: RefusalOptions = {}): Promise<Verdicts> {
  // Stryker disable next-line BooleanLiteral: diff-tree between two trees takes no optional lock either way; readOnly says what the call promises
  const raw = await gitBytes(["diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", base, tree], {
    cwd,
    readOnly: true,
    env,
    timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS,
  });
  const changes = parseRawDiff(raw);
  const refused: string[] = [];
  const warnings: string[] = [];
  for (const change of changes) {
    if (change.newMode !== GITLINK) continue;
    if (change.oldMode !== GITLINK) {
      refused.push(
        `${change.path} is a nested git repository that is not a submodule: git add -A records it as a bare gitlink, so a checkout of the commit has an empty folder there (commit its files in the outer repository, or make it a submodule)`,
      );
    } else {
      refused.push(`the change moves the submodule pointer ${change.path}; a clean clone has no submodule checkout to carry it`);
    }
  }
  // A deleted symlink has new mode 000000, so only added, changed or retyped links are read.
  const links = changes.filter((change) => change.newMode === SYMLINK);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: an empty list read through cat-file gives an empty map too; the test only saves a process
  const targets =
    links.length > 0
      ? await readBlobs(
          links.map((link) => link.newObject),
          cwd,
          env,
        )
      : new Map<string, string>();
  for (const link of links) {
    const target = targets.get(link.newObject) ?? "";
    const where = outsideTarget(link.path, target);
    if (where === undefined) continue;
    const what = `the symlink ${link.path} points to ${JSON.stringify(target)}, ${where} outside the repository: it resolves on this machine only and dangles in any other checkout`;
    if (options.allowExternalSymlinks === true) warnings.push(`${what} (allowed)`);
    else refused.push(`${what} (allow it with --allow-external-symlinks or clean_clone.allow_external_symlinks)`);
  }
  return { refused, warnings };
}

/**
 * The refusals as one sentence for a build error: as many whole ones as fit `maxBytes`, in order,
 * and a count of the rest, so a change that adds thousands of nested repositories still names
 * the first paths instead of being cut in the middle of one.
 */
export function describeRefusals(refused: readonly string[], maxBytes: number): string {
  const lead = "the commit cannot be checked out as it stands here: ";
  let text = lead;
  let shown = 0;
  for (const sentence of refused) {
    const next = `${shown === 0 ? "" : "; "}${sentence}`;
    const rest = refused.length - shown - 1;
    const room = rest > 0 ? Buffer.byteLength(`; … and ${refused.length} more`) : 0;
    // The first is always named; one too long for the budget is cut by the error's own bound.
    if (shown > 0 && Buffer.byteLength(text + next) + room > maxBytes) break;
    text += next;
    shown += 1;
  }
  const rest = refused.length - shown;
  return rest === 0 ? text : `${text}; … and ${rest} more`;
}
