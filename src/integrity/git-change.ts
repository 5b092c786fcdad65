/**
 * The change as git sees it: the work in a task's worktree (staged into a scratch copy of its
 * index, as the commit will stage it, so the worktree's own index is never touched) against
 * the base commit, with renames paired (`diff-index -M`), and both sides of each file the
 * gate reads taken from git's objects (`cat-file --batch`), never from the working tree, where
 * an agent could leave a FIFO. Reads are bounded: a file over the per-file cap, or past the
 * change's total budget, is left unread and said so.
 */
import { copyFile, stat, utimes } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { git, gitBytes, splitNul, stageAll } from "../workspace/index.js";
import type { FileChange } from "./change.js";
import { configRoleOf, isWorkflowPath, languageOf } from "./paths.js";

export interface ReadChangeOptions {
  /** The task's worktree. */
  worktree: string;
  /** The commit the change is compared with. */
  base: string;
  /** A folder of the App's (not the worktree) for the scratch index. */
  scratchDir: string;
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
}

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
    else entries.push({ status: "modified", oldPath: first, newPath: first, ...(oldBlob ? { oldBlob } : {}), ...(newBlob ? { newBlob } : {}) });
  }
  return entries;
}

/** Copies the worktree's index for the scratch staging, its mtime kept (a newer one would hide racily clean entries). */
async function seedIndex(worktree: string, copy: string): Promise<boolean> {
  const path = await git(["rev-parse", "--git-path", "index"], { cwd: worktree, readOnly: true });
  const original = isAbsolute(path) ? path : join(worktree, path);
  let info;
  try {
    info = await stat(original, { bigint: true });
  } catch {
    return false;
  }
  await copyFile(original, copy);
  await utimes(copy, Number(info.atimeNs) / 1e9, Number(info.mtimeNs - 1000n) / 1e9);
  return true;
}

/** Reads the change of the work in `options.worktree` against `options.base`. */
export async function readWorkChange(options: ReadChangeOptions): Promise<FileChange[]> {
  const index = join(options.scratchDir, "integrity.index");
  const env = { GIT_INDEX_FILE: index };
  const config = ["-c", "core.splitIndex=false"];
  if (!(await seedIndex(options.worktree, index))) await git([...config, "read-tree", options.base], { cwd: options.worktree, env });
  await stageAll({ cwd: options.worktree, env }, [], config);
  const raw = await gitBytes([...config, "diff-index", "--cached", "-M", "--raw", "-z", "--no-abbrev", options.base, "--"], {
    cwd: options.worktree,
    env,
    readOnly: true,
  });
  return readSides(options.worktree, parseRaw(raw), options);
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

/** Fills in the text of both sides of the entries the gate reads, within the caps. */
async function readSides(cwd: string, entries: RawEntry[], options: { maxFileBytes?: number; maxTotalBytes?: number }): Promise<FileChange[]> {
  const maxFile = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  let budget = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  const wanted = new Set<string>();
  for (const entry of entries) {
    if (entry.oldBlob && gateReads(entry.oldPath ?? "")) wanted.add(entry.oldBlob);
    if (entry.newBlob && gateReads(entry.newPath ?? "")) wanted.add(entry.newBlob);
  }
  const sizes = await blobSizes(cwd, [...wanted]);
  const unread = new Map<string, FileChange["unread"]>();
  const toRead: string[] = [];
  for (const blob of wanted) {
    const size = sizes.get(blob) ?? Infinity;
    if (size > maxFile) unread.set(blob, "too-large");
    else if (size > budget) unread.set(blob, "over-budget");
    else {
      budget -= size;
      toRead.push(blob);
    }
  }
  const texts = await blobTexts(cwd, toRead, options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES);
  for (const [blob, text] of texts) if (text === undefined) unread.set(blob, "binary");
  return entries.map((entry): FileChange => {
    const change: FileChange = { status: entry.status };
    if (entry.oldPath !== undefined) change.oldPath = entry.oldPath;
    if (entry.newPath !== undefined) change.newPath = entry.newPath;
    const oldText = entry.oldBlob ? texts.get(entry.oldBlob) : undefined;
    const newText = entry.newBlob ? texts.get(entry.newBlob) : undefined;
    if (oldText !== undefined) change.oldText = oldText;
    if (newText !== undefined) change.newText = newText;
    const why = (entry.oldBlob && unread.get(entry.oldBlob)) || (entry.newBlob && unread.get(entry.newBlob));
    if (why) change.unread = why;
    return change;
  });
}

/** Sizes of blobs by id (`cat-file --batch-check`). */
async function blobSizes(cwd: string, blobs: readonly string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  if (blobs.length === 0) return sizes;
  const out = await git(["cat-file", "--batch-check=%(objectname) %(objectsize)"], { cwd, readOnly: true, input: `${blobs.join("\n")}\n` });
  for (const line of out.split("\n")) {
    const [id = "", size = ""] = line.split(" ");
    if (size !== "" && /^\d+$/.test(size)) sizes.set(id, Number(size));
  }
  return sizes;
}

/** The text of each blob (`cat-file --batch`); undefined for a binary one (a NUL byte in it). */
async function blobTexts(cwd: string, blobs: readonly string[], maxTotal: number): Promise<Map<string, string | undefined>> {
  const texts = new Map<string, string | undefined>();
  if (blobs.length === 0) return texts;
  // Each object comes with a header line (`<id> blob <size>\n`) and a newline after it.
  const bytes = await gitBytes(["cat-file", "--batch"], { cwd, readOnly: true, input: `${blobs.join("\n")}\n`, captureBytes: maxTotal + blobs.length * 80 });
  let at = 0;
  while (at < bytes.length) {
    const eol = bytes.indexOf(0x0a, at);
    if (eol < 0) break;
    const [id = "", , size = "0"] = bytes.subarray(at, eol).toString("latin1").split(" ");
    const length = Number(size);
    const body = bytes.subarray(eol + 1, eol + 1 + length);
    texts.set(id, body.includes(0) ? undefined : body.toString("utf8"));
    at = eol + 1 + length + 1;
  }
  return texts;
}
