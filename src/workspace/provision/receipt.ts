/**
 * The provisioning receipt: one JSON line at the worktree root, written atomically, and kept
 * out of git through the repository's `info/exclude`.
 */
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { schemas } from "../../schema/index.js";
import { readBoundedTextSync, writeFileAtomicSync } from "../../files/index.js";
import { GitError } from "../git-errors.js";
import { git } from "../git.js";
import { linkedWorktreeDirs } from "../git-dir.js";
import { repositoryLocks } from "../repo-lock.js";

/** The receipt's file name at the worktree root. */
export const PROVISION_RECEIPT = ".harness-provisioned";

/** The receipt: the command that ran (null for a no-op), when, and how long it took. */
export interface ProvisionReceipt {
  cmd: string | null;
  exitCode: 0;
  at: string;
  durationMs: number;
}

/**
 * The exclude lines for a worktree whose path inside its repository is `prefix` (empty at the
 * top): the receipt, and the temp files it is written through.
 */
function excludeLines(prefix: string): string[] {
  // Escape what gitignore would read as a pattern, so the lines match this one path only.
  const anchored = `/${prefix}${PROVISION_RECEIPT}`.replace(/[*?[\]\\!#]/g, "\\$&");
  return [anchored, `${anchored}.*.tmp`];
}

/** Where the receipt of `worktree` lives. */
export function provisionReceiptPath(worktree: string): string {
  return join(worktree, PROVISION_RECEIPT);
}

/** A receipt is one short JSON line; anything larger is not one. */
const MAX_RECEIPT_BYTES = 64 * 1024;

/**
 * The receipt of `worktree`, or undefined when it is missing or not a valid receipt. The
 * worktree is the agents' to write: a FIFO, a symlink or a huge file planted under the
 * receipt's name counts as no receipt (provisioning writes a real one over it) and never
 * blocks the App, which reads it on its main thread.
 */
export function readReceipt(worktree: string): ProvisionReceipt | undefined {
  let text: string;
  // On one line so the mark reaches the catch. An empty catch leaves text undefined, which parseValid refuses like a
  // missing file (the try's block is pinned by the receipt tests). Any refusal of the bounded reader means "not provisioned".
  // Stryker disable next-line ObjectLiteral,BlockStatement: see above
  try {
    text = readBoundedTextSync(provisionReceiptPath(worktree), { maxBytes: MAX_RECEIPT_BYTES });
  } catch {
    return undefined;
  }
  return schemas().parseValid<ProvisionReceipt>("provision-receipt", text);
}

/** True when `worktree` holds a valid receipt. */
export function isProvisioned(worktree: string): boolean {
  return readReceipt(worktree) !== undefined;
}

/**
 * Writes the receipt atomically: a temp file in the same folder, fsync, rename. A reader sees
 * either no receipt or the whole line. Validates against the schema first.
 */
export function writeReceipt(worktree: string, receipt: ProvisionReceipt): string {
  const ordered: ProvisionReceipt = { cmd: receipt.cmd, exitCode: receipt.exitCode, at: receipt.at, durationMs: receipt.durationMs };
  schemas().validate("provision-receipt", ordered, PROVISION_RECEIPT);
  const target = provisionReceiptPath(worktree);
  writeFileAtomicSync(target, `${JSON.stringify(ordered)}\n`);
  return target;
}

/**
 * Lists the receipt in the repository's `info/exclude` (the common git dir, so linked worktrees
 * share it), once. A folder that is not a git repository has nothing to exclude from.
 */
export async function excludeReceipt(worktree: string): Promise<void> {
  const located = await commonDirAndPrefix(worktree);
  if (located === undefined) return;
  const { gitDir, prefix } = located;
  // Serialised per repository, so two worktrees provisioned at once never duplicate a line.
  await repositoryLocks.with(gitDir, async () => appendMissingLines(join(gitDir, "info", "exclude"), excludeLines(prefix)));
}

/** The repository's common git folder and the worktree's path inside it; undefined outside any repository. */
async function commonDirAndPrefix(worktree: string): Promise<{ gitDir: string; prefix: string } | undefined> {
  // A task's linked worktree (the runner's case) names its common folder in its files, at its top: one git process less.
  const linked = linkedWorktreeDirs(worktree);
  if (linked !== undefined) return { gitDir: linked.commonDir, prefix: "" };
  let output: string;
  try {
    // Stryker disable next-line BooleanLiteral: rev-parse takes no optional lock, so read-only changes nothing
    output = await git(["rev-parse", "--git-common-dir", "--show-prefix"], { cwd: worktree, readOnly: true });
  } catch (error) {
    if (error instanceof GitError && error.kind === "not-a-repository") return undefined;
    throw error;
  }
  const [commonDir = ".git", prefix = ""] = output.split("\n");
  return { gitDir: isAbsolute(commonDir) ? commonDir : resolve(worktree, commonDir), prefix };
}

function appendMissingLines(excludePath: string, lines: readonly string[]): void {
  let current = "";
  try {
    current = readFileSync(excludePath, "utf8");
  } catch {
    mkdirSync(join(excludePath, ".."), { recursive: true });
  }
  const present = new Set(current.split("\n").map((line) => line.trim()));
  const missing = lines.filter((line) => !present.has(line));
  if (missing.length === 0) return;
  const separator = current === "" || current.endsWith("\n") ? "" : "\n";
  const fd = openSync(excludePath, "a");
  try {
    writeSync(fd, `${separator}${missing.join("\n")}\n`);
  } finally {
    closeSync(fd);
  }
}
