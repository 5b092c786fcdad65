/**
 * The change as git sees it: the work in a task's worktree against the base commit. Tracked
 * files from `diff-index` (the working tree against the base, through the index's stat data,
 * renames paired, nested repositories never asked), untracked ones from `ls-files --others`
 * (what `git add -A` would add); the base's side of each file the gate reads from git's objects
 * in one `cat-file --batch`, the work's side through the bounded reader (no symlink followed,
 * no FIFO opened, nothing over the cap read). A file moved with `mv` (deleted and untracked) is
 * paired again when its text is unchanged. Four processes in all, whatever the change's size:
 * on a loaded machine a process start is the largest cost.
 */
import { join } from "node:path";
import { readBoundedText, UnsafeFileError } from "../files/index.js";
import { gitBytes, splitNul } from "../workspace/index.js";
import type { FileChange } from "./change.js";
import { configRoleOf, isWorkflowPath, languageOf } from "./paths.js";

export interface ReadChangeOptions {
  /** The task's worktree. */
  worktree: string;
  /** The commit the change is compared with. */
  base: string;
  /** The largest file read (default 1 MiB); a larger one is `too-large`. */
  maxFileBytes?: number;
  /** The most bytes read for the whole change (default 64 MiB); files past it are `over-budget`. */
  maxTotalBytes?: number;
}

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
export const DEFAULT_MAX_TOTAL_BYTES = 64 * 1024 * 1024;
/** Regular files and executables; symlinks and gitlinks have no text to judge. */
const FILE_MODES = new Set(["100644", "100755"]);

/** Whether the gate reads a path's text: code, test configuration, a workflow. */
export function gateReads(path: string): boolean {
  return languageOf(path) !== undefined || configRoleOf(path) !== undefined || isWorkflowPath(path);
}

interface RawEntry {
  status: FileChange["status"];
  oldPath?: string;
  newPath?: string;
  oldBlob?: string;
  newBlob?: string;
  /** The work's side is read from the working tree (git has no object for it). */
  newFromWorktree?: boolean;
  /** The work's side is a symlink or a gitlink where a file was: no test of its own, judged as empty. */
  newSpecial?: boolean;
}

/** The id `diff-index` gives a working-tree side it has not hashed. */
const ZERO_ID = "0".repeat(40);

/** Parses `diff-index --raw -z` output: `:<mode> <mode> <sha> <sha> <status>\0<path>\0[<path>\0]`. */
function parseRaw(bytes: Buffer): RawEntry[] {
  const parts = splitNul(bytes);
  const entries: RawEntry[] = [];
  for (let i = 0; i < parts.length;) {
    const header = (parts[i] ?? "").slice(1).split(" ");
    const [oldMode = "", newMode = "", oldSha = "", newSha = "", code = ""] = header;
    const letter = code.charAt(0);
    const first = parts[i + 1] ?? "";
    const second = letter === "R" || letter === "C" ? (parts[i + 2] ?? "") : undefined;
    i += second !== undefined ? 3 : 2;
    const oldBlob = FILE_MODES.has(oldMode) ? oldSha : undefined;
    const newBlob = FILE_MODES.has(newMode) ? newSha : undefined;
    if (letter === "A") entries.push({ status: "added", newPath: first, ...(newBlob ? { newBlob } : {}) });
    else if (letter === "D") entries.push({ status: "deleted", oldPath: first, ...(oldBlob ? { oldBlob } : {}) });
    else if (letter === "R")
      entries.push({ status: "renamed", oldPath: first, newPath: second ?? first, ...(oldBlob ? { oldBlob } : {}), ...(newBlob ? { newBlob } : {}) });
    // A copy leaves its source in place: for the gate it is an added file.
    else if (letter === "C") entries.push({ status: "added", newPath: second ?? first, ...(newBlob ? { newBlob } : {}) });
    else
      entries.push({
        status: "modified",
        oldPath: first,
        newPath: first,
        ...(oldBlob ? { oldBlob } : {}),
        ...(newBlob ? { newBlob } : { newSpecial: true }),
      });
  }
  return entries;
}

/** Reads the change of the work in `options.worktree` against `options.base`. */
export async function readWorkChange(options: ReadChangeOptions): Promise<FileChange[]> {
  const cwd = options.worktree;
  const [raw, untracked] = await Promise.all([
    gitBytes(["diff-index", "-M", "--raw", "-z", "--no-abbrev", "--ignore-submodules=all", options.base, "--"], { cwd, readOnly: true }),
    gitBytes(["ls-files", "--others", "--exclude-standard", "-z", "--directory", "--no-empty-directory"], { cwd, readOnly: true }),
  ]);
  const entries = parseRaw(raw);
  // A nested repository shows as its folder (`dir/`): not a file of this change.
  for (const path of splitNul(untracked)) if (!path.endsWith("/")) entries.push({ status: "added", newPath: path, newFromWorktree: true });
  for (const entry of entries) if (entry.newPath !== undefined && entry.newBlob === ZERO_ID) entry.newFromWorktree = true;
  const changes = await readSides(cwd, entries, options);
  return pairMoves(changes);
}

/**
 * A test file moved with `mv` shows as deleted plus untracked: pairs each deleted file with an
 * added one of the same text (first come), so that a file moved out of the test paths is seen as moved.
 */
function pairMoves(changes: FileChange[]): FileChange[] {
  const added = new Map<string, FileChange[]>();
  for (const change of changes)
    if (change.status === "added" && change.newText !== undefined) added.set(change.newText, [...(added.get(change.newText) ?? []), change]);
  const paired = new Set<FileChange>();
  const result: FileChange[] = [];
  for (const change of changes) {
    if (paired.has(change)) continue;
    const twin =
      change.status === "deleted" && change.oldText !== undefined ? added.get(change.oldText)?.find((candidate) => !paired.has(candidate)) : undefined;
    if (!twin || twin.newPath === undefined || change.oldPath === undefined) {
      result.push(change);
      continue;
    }
    paired.add(twin);
    result.push({ status: "renamed", oldPath: change.oldPath, newPath: twin.newPath, oldText: change.oldText ?? "", newText: twin.newText ?? "" });
  }
  return result.filter((change) => !paired.has(change) || change.status === "renamed");
}

/** The changes between two commits (the benchmark's and a merged branch's case). */
export async function readCommitChange(options: {
  repo: string;
  base: string;
  head: string;
  maxFileBytes?: number;
  maxTotalBytes?: number;
}): Promise<FileChange[]> {
  const raw = await gitBytes(["diff-tree", "-r", "-M", "--raw", "-z", "--no-abbrev", options.base, options.head, "--"], { cwd: options.repo, readOnly: true });
  return readSides(options.repo, parseRaw(raw), options);
}

/** Worktree files read at once. */
const READ_BATCH = 64;

/** Fills in the text of both sides of the entries the gate reads, within the caps. */
async function readSides(cwd: string, entries: RawEntry[], options: { maxFileBytes?: number; maxTotalBytes?: number }): Promise<FileChange[]> {
  const maxFile = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxTotal = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  const blobs = new Set<string>();
  for (const entry of entries) {
    if (entry.oldBlob && gateReads(entry.oldPath ?? "")) blobs.add(entry.oldBlob);
    if (entry.newBlob && !entry.newFromWorktree && gateReads(entry.newPath ?? "")) blobs.add(entry.newBlob);
  }
  const read = await blobTexts(cwd, [...blobs], maxFile, maxTotal);
  let budget = maxTotal - read.bytes;
  const fromWorktree = entries.filter((entry) => entry.newFromWorktree && entry.newPath !== undefined && gateReads(entry.newPath));
  const worktreeTexts = new Map<RawEntry, Side>();
  for (let at = 0; at < fromWorktree.length; at += READ_BATCH) {
    const batch = fromWorktree.slice(at, at + READ_BATCH);
    const sides = await Promise.all(batch.map((entry) => worktreeText(cwd, entry.newPath ?? "", Math.min(maxFile, Math.max(0, budget)), budget <= 0)));
    batch.forEach((entry, index) => {
      const side = sides[index] as Side;
      if (side.text !== undefined) budget -= Buffer.byteLength(side.text, "utf8");
      worktreeTexts.set(entry, side);
    });
  }
  return entries.map((entry): FileChange => {
    const change: FileChange = { status: entry.status };
    if (entry.oldPath !== undefined) change.oldPath = entry.oldPath;
    if (entry.newPath !== undefined) change.newPath = entry.newPath;
    const old: Side | undefined = entry.oldBlob ? read.sides.get(entry.oldBlob) : undefined;
    const next: Side | undefined = entry.newSpecial
      ? { text: "", unread: "not-a-file" }
      : entry.newFromWorktree
        ? worktreeTexts.get(entry)
        : entry.newBlob
          ? read.sides.get(entry.newBlob)
          : undefined;
    if (old?.text !== undefined) change.oldText = old.text;
    if (next?.text !== undefined) change.newText = next.text;
    const why = old?.unread ?? next?.unread;
    if (why) change.unread = why;
    return change;
  });
}

/** One side of a file as read: its text, or why it was not read. */
interface Side {
  text?: string;
  unread?: FileChange["unread"];
}

/** A file of the working tree through the bounded reader: never a symlink, a FIFO or more than `maxBytes`. */
async function worktreeText(cwd: string, path: string, maxBytes: number, spent: boolean): Promise<Side> {
  if (spent) return { unread: "over-budget" };
  try {
    const text = await readBoundedText(join(cwd, path), { maxBytes, within: cwd });
    return text.includes("\u0000") ? { unread: "binary" } : { text };
  } catch (error) {
    if (!(error instanceof UnsafeFileError)) throw error;
    if (error.reason === "too-large") return { unread: "too-large" };
    // A symlink or a FIFO holds no test of its own: judged as an empty file. A file gone since the listing has no side.
    return error.reason === "missing" ? {} : { text: "", unread: "not-a-file" };
  }
}

/**
 * The text of each blob, from one `cat-file --batch`: a blob over `maxFile` is skipped (its
 * bytes pass the pipe, never a string), a binary one (a NUL byte) is marked, and output past
 * `maxTotal` is not kept (the blobs it held are `over-budget`).
 */
async function blobTexts(cwd: string, blobs: readonly string[], maxFile: number, maxTotal: number): Promise<{ sides: Map<string, Side>; bytes: number }> {
  const sides = new Map<string, Side>();
  if (blobs.length === 0) return { sides, bytes: 0 };
  // Each object comes with a header line (`<id> blob <size>\n`) and a newline after it.
  const bytes = await gitBytes(["cat-file", "--batch"], { cwd, readOnly: true, input: `${blobs.join("\n")}\n`, captureBytes: maxTotal + blobs.length * 64 });
  let at = 0;
  let kept = 0;
  while (at < bytes.length) {
    const eol = bytes.indexOf(0x0a, at);
    if (eol < 0) break;
    const [id = "", , size = "0"] = bytes.subarray(at, eol).toString("latin1").split(" ");
    const length = Number(size);
    if (!Number.isSafeInteger(length) || eol + 1 + length > bytes.length) break;
    const body = bytes.subarray(eol + 1, eol + 1 + length);
    if (length > maxFile) sides.set(id, { unread: "too-large" });
    else if (body.includes(0)) sides.set(id, { unread: "binary" });
    else {
      sides.set(id, { text: body.toString("utf8") });
      kept += length;
    }
    at = eol + 1 + length + 1;
  }
  for (const blob of blobs) if (!sides.has(blob)) sides.set(blob, { unread: "over-budget" });
  return { sides, bytes: kept };
}
