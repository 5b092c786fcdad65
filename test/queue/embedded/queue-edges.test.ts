/** Small edges of the queue's files: a file that vanishes while it is quarantined, ids noted from job files, the home lock's refusal without a holder. */
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, open, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { exec } from "../../../src/exec/index.js";
import { DeliveryLog, HarnessHomeInUseError, salvageStory } from "../../../src/queue/index.js";
import { quarantineFile } from "../../../src/queue/quarantine.js";
import { tempDir } from "../helpers.js";

describe("queue edges", () => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-queue-edges-"));
  });
  afterEach(() => remove());

  it("lets go of a file that vanishes between its read and its move (a FIFO holds the read until the test removed it)", async () => {
    const jobs = join(dir, "jobs");
    await mkdir(jobs);
    const path = join(jobs, "torn.json");
    expect((await exec(["mkfifo", path], { cwd: dir })).exitCode).toBe(0);
    const moving = quarantineFile(dir, jobs, "torn.json", "torn");
    const writer = await open(path, "w");
    await rm(path);
    await writer.writeFile("{");
    await writer.close();
    expect(await moving).toBeUndefined();
    expect(readdirSync(join(dir, "quarantine"))).toEqual([]);
  });

  it("fails a move that fails otherwise than the file being gone (a numbered name too long)", async () => {
    const jobs = join(dir, "jobs");
    await mkdir(jobs);
    await mkdir(join(dir, "quarantine"));
    // 255 bytes, the longest name: taken in the quarantine, its numbered form is too long.
    const name = `${"a".repeat(250)}.json`;
    await writeFile(join(jobs, name), "{");
    await writeFile(join(dir, "quarantine", name), "{");
    await expect(quarantineFile(dir, jobs, name, "torn")).rejects.toMatchObject({ code: "ENAMETOOLONG", syscall: "rename" });
    expect(readdirSync(jobs)).toEqual([name]);
  });

  it("salvages no story whose issue number is not a whole number", () => {
    const job = (number: unknown): string => JSON.stringify({ job: { installationId: 1, repository: { owner: "acme", name: "widgets" }, issue: { number } } });
    expect(salvageStory(job(3))).toEqual({ installationId: 1, owner: "acme", repo: "widgets", issueNumber: 3 });
    expect(salvageStory(job(1.5))).toBeUndefined();
    expect(salvageStory(job("3"))).toBeUndefined();
  });

  it("remembers a noted id without writing it", async () => {
    const path = join(dir, "deliveries");
    const log = await DeliveryLog.open(path);
    log.note("d-1");
    log.note("d-1");
    expect([log.has("d-1"), log.has("d-2")]).toEqual([true, false]);
    await log.close();
    expect(readFileSync(path, "utf8")).toBe("");
  });

  it("refuses the home without naming a holder it could not read, or a time it could not", () => {
    const tail = "one App per data directory: stop that process, or give this one its own HARNESS_HOME";
    expect(new HarnessHomeInUseError("/h", undefined, undefined).message).toBe(`HARNESS_HOME /h is in use by another story-harness process; ${tail}`);
    expect(new HarnessHomeInUseError("/h", { pid: 7, startTime: "s", instance: "i" }, undefined).message).toBe(
      `HARNESS_HOME /h is in use by another story-harness process (pid 7); ${tail}`,
    );
  });
});
