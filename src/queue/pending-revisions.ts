/**
 * Revision triggers that arrive while a run of their story is queued or running: kept, one file
 * per story, and batched into one `revise` job once that run ends (one revision at a time per
 * story, and nothing a reviewer or CI said is lost or answered "submit it again").
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../files/index.js";
import type { StoryJob } from "./port.js";

/** True for a revise job as this store writes it (the job file it becomes is validated against the queue-job schema when written). */
function isReviseJob(value: unknown): value is StoryJob {
  if (typeof value !== "object" || value === null) return false;
  const job = value as Partial<StoryJob>;
  return (
    job.kind === "revise" &&
    typeof job.storyKey === "string" &&
    typeof job.deliveryId === "string" &&
    typeof job.repository === "object" &&
    typeof job.issue === "object" &&
    Array.isArray(job.revision?.triggers)
  );
}

/** The job a batch runs as: the first trigger's job, carrying every trigger in arrival order. */
export function mergeRevisionJobs(jobs: readonly StoryJob[]): StoryJob | undefined {
  const [first] = jobs;
  if (!first) return undefined;
  const triggers = jobs.flatMap((job) => job.revision?.triggers ?? []);
  return { ...first, revision: { triggers } };
}

/** The per-story store of revise jobs waiting for their story's current run to end. */
export class PendingRevisions {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  private fileOf(storyKey: string): string {
    // Hashed: a story key holds `/` and `#`, and a file name must not.
    return join(this.dir, `${createHash("sha256").update(storyKey).digest("hex").slice(0, 32)}.json`);
  }

  private async read(file: string): Promise<StoryJob[]> {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    // A batch file that does not parse, or an entry that is not a revise job, is dropped: it must not stop the queue.
    try {
      const data = JSON.parse(text) as unknown;
      return Array.isArray(data) ? data.filter((entry): entry is StoryJob => isReviseJob(entry)) : [];
    } catch {
      return [];
    }
  }

  /** Adds a revise job to its story's batch (durably, before the trigger is answered). */
  async add(job: StoryJob): Promise<void> {
    const file = this.fileOf(job.storyKey);
    const jobs = await this.read(file);
    await writeFileAtomic(file, JSON.stringify([...jobs, job]));
  }

  /** Takes the story's batch as one job (undefined when nothing waits); the batch is gone after. */
  async take(storyKey: string): Promise<StoryJob | undefined> {
    const file = this.fileOf(storyKey);
    const merged = mergeRevisionJobs(await this.read(file));
    await rm(file, { force: true });
    return merged;
  }

  /** The story keys with a batch waiting (read at open: a batch whose run ended before a restart). */
  async stories(): Promise<string[]> {
    const keys: string[] = [];
    for (const name of readdirSync(this.dir).filter((entry) => entry.endsWith(".json"))) {
      const [job] = await this.read(join(this.dir, name));
      if (job) keys.push(job.storyKey);
    }
    return keys;
  }
}
