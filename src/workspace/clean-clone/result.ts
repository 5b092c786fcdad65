/**
 * Writing `clean-clone-result.json`: validated against its schema first, so a reader of a run
 * directory can trust the keys, and written atomically, so a reader never sees half a file.
 */
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { succeeded } from "../../exec/index.js";
import { writeFileAtomic } from "../../files/index.js";
import { schemas } from "../../schema/index.js";
import type { CleanCloneResult } from "./record.js";

/** The artifact's conventional file name. */
export const CLEAN_CLONE_RESULT_FILE = "clean-clone-result.json";

/**
 * Validates `result` against `schemas/clean-clone-result.schema.json` (throwing
 * `SchemaValidationError` naming `path` and each offending key) and writes it to `path`
 * atomically: a temporary file in the same folder, fsync, rename.
 */
export async function writeCleanCloneResult(path: string, result: CleanCloneResult): Promise<void> {
  schemas().validate<CleanCloneResult>("clean-clone-result", result, path);
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, `${JSON.stringify(result, null, 2)}\n`);
}

/** True when the clean-clone check ran and the suite passed in the fresh clone (exit 0 within its time). */
export function cleanClonePassed(result: CleanCloneResult): boolean {
  return result.ran && succeeded(result);
}

/** The CLI's exit code for a result: 0 the suite passed, 1 it failed, 2 the check did not run. */
export function cleanCloneExitCode(result: CleanCloneResult): 0 | 1 | 2 {
  if (!result.ran) return 2;
  return cleanClonePassed(result) ? 0 : 1;
}
