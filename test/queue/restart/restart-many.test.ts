import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedQueue, listQuarantine, type JobRecord } from "../../../src/queue/index.js";
import { makeJob, tempDir } from "../helpers.js";

/** More jobs than one read of the worker takes (500), so a restart reads them in several chunks. */
const JOBS = 1_234;

describe("EmbeddedQueue restart over many queued jobs", () => {
  it("loads every job, in order, across read chunks, and quarantines the torn one among them", async () => {
    const { dir, remove } = await tempDir("harness-restart-many-");
    const jobsDir = join(dir, "jobs");
    mkdirSync(jobsDir, { recursive: true });
    const ids: string[] = [];
    for (let index = 0; index < JOBS; index += 1) {
      const id = `${String(1_700_000_000_000 + index).padStart(15, "0")}-${String(index).padStart(6, "0")}-0000beef`;
      ids.push(id);
      const record: JobRecord = { id, job: makeJob(index + 1, `d-${index}`), state: "queued", interruptions: 0 };
      // One torn file in the second chunk: a power loss left it empty.
      writeFileSync(join(jobsDir, `${id}.json`), index === 777 ? "" : `${JSON.stringify(record)}\n`);
    }
    const quarantined: string[] = [];
    const queue = await EmbeddedQueue.open({ dir, log: { error: () => undefined }, onQuarantine: (job) => quarantined.push(job.file) });
    try {
      const loaded = queue.jobs().map((record) => record.id);
      expect(loaded).toEqual(ids.filter((_, index) => index !== 777));
      expect(queue.jobs()[1_000]?.job.issue.number).toBe(1_002);
      expect(await queue.isActive("acme/widgets#778")).toBe(false);
      expect(await queue.isActive("acme/widgets#1234")).toBe(true);
      // The delivery ids of the loaded jobs are known: a redelivery starts nothing.
      expect(await queue.enqueue(makeJob(5_000, "d-1200"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
      expect(await listQuarantine(dir)).toEqual([`${ids[777]}.json`]);
      expect(quarantined).toEqual([`${ids[777]}.json`]);
      expect(readdirSync(jobsDir)).toHaveLength(JOBS - 1);
    } finally {
      await queue.close();
      await remove();
    }
  });
});
