/**
 * Copies the target's untracked-but-not-ignored files into the clone, byte-exact in name and
 * content: paths stay Buffers end to end, so a name that is not valid UTF-8 still arrives,
 * and the executable bit and symlinks are preserved because git records both.
 */
import { chmod, copyFile, cp, lstat, mkdir, readlink, symlink } from "node:fs/promises";
import { CleanCloneBuildError } from "./clean-clone-errors.js";

const SLASH = 0x2f;
/** Copies in flight at once: enough to overlap I/O without exhausting descriptors. */
const PARALLEL_COPIES = 16;

/** Splits NUL-terminated output (`-z`) into raw byte entries, keeping names that are not UTF-8. */
export function splitNulBytes(bytes: Buffer): Buffer[] {
  const entries: Buffer[] = [];
  let start = 0;
  for (let index = bytes.indexOf(0, start); index !== -1; index = bytes.indexOf(0, start)) {
    if (index > start) entries.push(bytes.subarray(start, index));
    start = index + 1;
  }
  if (start < bytes.length) entries.push(bytes.subarray(start));
  return entries;
}

function under(root: Buffer, relative: Buffer): Buffer {
  return Buffer.concat([root, Buffer.from([SLASH]), relative]);
}

function parentOf(path: Buffer): Buffer {
  return path.subarray(0, path.lastIndexOf(SLASH));
}

async function copyEntry(sourceRoot: Buffer, destinationRoot: Buffer, entry: Buffer): Promise<void> {
  const source = under(sourceRoot, entry);
  const destination = under(destinationRoot, entry);
  if (entry[entry.length - 1] === SLASH) {
    // git lists an untracked nested repository as `dir/`; `git add -A` records it as a gitlink,
    // so the clone needs the repository itself for its tree to match.
    await cp(source.toString(), destination.toString(), { recursive: true, verbatimSymlinks: true, preserveTimestamps: false });
    return;
  }
  await mkdir(parentOf(destination), { recursive: true });
  const stat = await lstat(source);
  if (stat.isSymbolicLink()) {
    await symlink(await readlink(source, { encoding: "buffer" }), destination);
  } else if (stat.isFile()) {
    await copyFile(source, destination);
    await chmod(destination, stat.mode & 0o777);
  }
  // Sockets and FIFOs are never recorded by git, so they are not carried either.
}

/**
 * Copies `entries` (paths relative to `targetTop`, as `git ls-files --others -z` lists them)
 * into `cloneDir`. Throws {@link CleanCloneBuildError} (step `copy`) naming the first failure.
 */
export async function copyUntracked(targetTop: string, cloneDir: string, entries: readonly Buffer[], repo: string): Promise<void> {
  const sourceRoot = Buffer.from(targetTop);
  const destinationRoot = Buffer.from(cloneDir);
  for (let offset = 0; offset < entries.length; offset += PARALLEL_COPIES) {
    const batch = entries.slice(offset, offset + PARALLEL_COPIES);
    const outcomes = await Promise.allSettled(batch.map((entry) => copyEntry(sourceRoot, destinationRoot, entry)));
    const failed = outcomes.findIndex((outcome) => outcome.status === "rejected");
    if (failed !== -1) {
      const outcome = outcomes[failed] as PromiseRejectedResult;
      const reason = outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason);
      throw new CleanCloneBuildError("copy", repo, `could not copy ${JSON.stringify(batch[failed]?.toString() ?? "")}: ${reason}`);
    }
  }
}
