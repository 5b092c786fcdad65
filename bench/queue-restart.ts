/**
 * Restart with a full queue: opening the embedded queue over 10,000 queued job files ÷ a plain read and parse of the same files.
 *
 * The job files are made once (valid jobs, as the App writes them). Each repetition, in the
 * A B B A order of bench/lib/paired.ts, times (a) `EmbeddedQueue.open` — list the folder, read,
 * parse and validate every job, quarantine what cannot be read, load the delivery log — and
 * (b) a baseline: list the folder, then `readFile` and `JSON.parse` of every job file, all
 * at once; then against a second baseline, `readFileSync` and `JSON.parse` one file after the
 * other (faster on a small machine, but it holds the event loop). All read from the page
 * cache (the first repetition of each side is a warm-up). The target is ≤ 2× a plain read.
 *
 *   npm run bench -- queue-restart [--jobs 10000] [--reps 9]
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { EmbeddedQueue, type JobRecord } from "../src/queue/index.js";
import { storyKey } from "../src/story-key/index.js";
import { formatPaired, measurePaired } from "./lib/paired.js";

const { values } = parseArgs({ options: { jobs: { type: "string", default: "10000" }, reps: { type: "string", default: "9" } } });
const JOBS = Number(values.jobs);
const REPS = Number(values.reps);
if (!Number.isInteger(JOBS) || JOBS < 1 || !Number.isInteger(REPS) || REPS < 1) throw new Error("--jobs and --reps must be positive integers");

const root = mkdtempSync(join(tmpdir(), "harness-bench-restart-"));
const queueDir = join(root, "queue");
const jobsDir = join(queueDir, "jobs");
mkdirSync(jobsDir, { recursive: true });
const start = Date.now();
for (let index = 0; index < JOBS; index += 1) {
  const id = `${String(start + index).padStart(15, "0")}-${String(index % 1_000_000).padStart(6, "0")}-0000beef`;
  const record: JobRecord = {
    id,
    state: "queued",
    interruptions: 0,
    job: {
      storyKey: storyKey("acme", "widgets", index + 1),
      kind: "start",
      installationId: 1,
      repository: { id: 7, owner: "acme", name: "widgets", cloneUrl: "https://github.com/acme/widgets.git", defaultBranch: "main" },
      issue: {
        number: index + 1,
        title: `Story ${index + 1}: a title of a usual length for an issue`,
        body: "As a user I want the widget to do the thing, so that the other thing happens.\n".repeat(4),
        updatedAt: new Date(start).toISOString(),
      },
      requestedBy: "octocat",
      deliveryId: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
      eventKey: `issues.labeled/7/${index + 1}/42/${new Date(start).toISOString()}/1`,
      enqueuedAt: new Date(start).toISOString(),
    },
  };
  writeFileSync(join(jobsDir, `${id}.json`), `${JSON.stringify(record)}\n`);
}

async function openQueue(): Promise<number> {
  const started = performance.now();
  const queue = await EmbeddedQueue.open({ dir: queueDir });
  const elapsed = performance.now() - started;
  if (queue.jobs().length !== JOBS) throw new Error(`the queue opened with ${queue.jobs().length} jobs, not ${JOBS}`);
  await queue.close();
  return elapsed;
}

/** The other plain way: one file after the other with synchronous reads (the event loop held throughout). */
function syncRead(): Promise<number> {
  const started = performance.now();
  const names = readdirSync(jobsDir).filter((name) => name.endsWith(".json"));
  const records = names.map((name) => JSON.parse(readFileSync(join(jobsDir, name), "utf8")) as JobRecord);
  const elapsed = performance.now() - started;
  if (records.length !== JOBS) throw new Error(`read ${records.length} jobs, not ${JOBS}`);
  return Promise.resolve(elapsed);
}

async function plainRead(): Promise<number> {
  const started = performance.now();
  const names = (await readdir(jobsDir)).filter((name) => name.endsWith(".json"));
  const records = await Promise.all(names.map(async (name) => JSON.parse(await readFile(join(jobsDir, name), "utf8")) as JobRecord));
  const elapsed = performance.now() - started;
  if (records.length !== JOBS) throw new Error(`read ${records.length} jobs, not ${JOBS}`);
  return elapsed;
}

try {
  console.log(`${JOBS} queued job files, reps=${REPS}`);
  console.log(
    formatPaired(`open the queue ÷ plain read and parse, readFile all at once (${JOBS} jobs)`, await measurePaired(openQueue, plainRead, REPS), { max: 2 }),
  );
  console.log(
    formatPaired(`open the queue ÷ plain read and parse, readFileSync one by one (${JOBS} jobs)`, await measurePaired(openQueue, syncRead, REPS), { max: 2 }),
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
