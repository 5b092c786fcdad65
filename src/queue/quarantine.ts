/**
 * Job files that cannot be read (torn by a power loss, emptied, an unknown `kind`, edited by
 * hand) are moved out of the way into `<queueDir>/quarantine/`, so they neither wedge their
 * story nor vanish: an operator sees them in `harness status`, and the story they name, when
 * enough of the file can be read, is told.
 */
import { mkdir, readdir, readFile, rename, stat } from "node:fs/promises";
import { join } from "node:path";

/** What could be read of a quarantined job: enough to tell its story, when present. */
export interface QuarantinedStory {
  installationId: number;
  owner: string;
  repo: string;
  issueNumber: number;
}

/** One quarantined job: a file (embedded queue) or an entry in Redis. */
export interface QuarantinedJob {
  /** The file's name in the quarantine folder. */
  file: string;
  /** Why it was quarantined (the parse or schema error). */
  reason: string;
  story?: QuarantinedStory;
  /** Where it is kept, when not in the App's `queue/quarantine/` (Redis: the hash and its field). */
  kept?: string;
}

/** Reads what it can of a job file's story: installation, repository and issue number. */
export function salvageStory(text: string): QuarantinedStory | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON: the value stays undefined, which names no story.
  }
  return salvageJobStory((value as { job?: unknown } | null)?.job);
}

/** Reads what it can of a story job's data (however damaged): installation, repository and issue number. */
export function salvageJobStory(value: unknown): QuarantinedStory | undefined {
  const job = value as { installationId?: unknown; repository?: { owner?: unknown; name?: unknown }; issue?: { number?: unknown } } | undefined;
  const installationId = job?.installationId;
  const owner = job?.repository?.owner;
  const repo = job?.repository?.name;
  const issueNumber = job?.issue?.number;
  if (typeof installationId !== "number" || typeof owner !== "string" || typeof repo !== "string") return undefined;
  // Number.isInteger is false for anything that is not a number.
  if (!/^[A-Za-z0-9_.-]+$/.test(owner) || !/^[A-Za-z0-9_.-]+$/.test(repo) || !Number.isInteger(issueNumber) || (issueNumber as number) < 1) return undefined;
  return { installationId, owner, repo, issueNumber: issueNumber as number };
}

/** The quarantine folder of a queue. */
export function quarantineDir(queueDir: string): string {
  return join(queueDir, "quarantine");
}

/**
 * Moves `<jobsDir>/<name>` into the quarantine folder (same file system: one rename) and
 * returns what is known of it. A name taken already gets a numbered suffix.
 */
export async function quarantineFile(queueDir: string, jobsDir: string, name: string, reason: string): Promise<QuarantinedJob | undefined> {
  const source = join(jobsDir, name);
  // A file that cannot be read salvages no story; one that is gone is let go by the rename below.
  // Stryker disable next-line StringLiteral,ArrowFunction: text that is not JSON (these replacements, or none) names no story either way
  const text = await readFile(source, "utf8").catch(() => "");
  const dir = quarantineDir(queueDir);
  await mkdir(dir, { recursive: true });
  let target = name;
  for (let n = 1; await exists(join(dir, target)); n += 1) target = `${name}.${n}`;
  try {
    await rename(source, join(dir, target));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const story = salvageStory(text);
  return { file: target, reason, ...(story ? { story } : {}) };
}

/** The names of the quarantined files, oldest name first. */
export async function listQuarantine(queueDir: string): Promise<string[]> {
  try {
    const names = await readdir(quarantineDir(queueDir));
    // Stryker disable next-line MethodExpression: node's readdir (libuv's scandir) lists names in this order already; the sort keeps the promise should that change
    return names.sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  // Stryker disable next-line ArrowFunction: a failed stat answering undefined instead of false is as falsy to the loop that asks
  return stat(path).then(
    () => true,
    () => false,
  );
}
