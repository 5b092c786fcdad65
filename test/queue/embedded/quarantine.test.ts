/** Quarantine: what is read of a job file's story, and where a quarantined file goes. */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listQuarantine, quarantineDir, salvageStory } from "../../../src/queue/index.js";
import { quarantineFile } from "../../../src/queue/quarantine.js";
import { tempDir } from "../helpers.js";

const story = { installationId: 3, owner: "acme.co", repo: "wid_gets-2", issueNumber: 12 };
const jobText = (job: Record<string, unknown>): string => JSON.stringify({ id: "x", job, state: "queued" });
const jobOf = (s: { installationId: unknown; owner: unknown; repo: unknown; issueNumber: unknown }) => ({
  installationId: s.installationId,
  repository: { owner: s.owner, name: s.repo },
  issue: { number: s.issueNumber },
});

describe("salvageStory", () => {
  it("reads installation, repository and issue of a job file that is otherwise not a job", () => {
    expect(salvageStory(jobText({ ...jobOf(story), kind: "resurrect" }))).toEqual(story);
  });

  it("reads nothing from text that is not JSON, or JSON without a job", () => {
    for (const text of ["", "{", "null", "[]", "7", '{"job":null}', '{"job":{}}']) expect(salvageStory(text)).toBeUndefined();
  });

  it("reads nothing when a field has the wrong type", () => {
    expect(salvageStory(jobText(jobOf({ ...story, installationId: "3" })))).toBeUndefined();
    expect(salvageStory(jobText(jobOf({ ...story, owner: 7 })))).toBeUndefined();
    expect(salvageStory(jobText(jobOf({ ...story, repo: null })))).toBeUndefined();
    expect(salvageStory(jobText(jobOf({ ...story, issueNumber: "12" })))).toBeUndefined();
  });

  it("reads nothing that could not name a repository or an issue: the story is told by these names", () => {
    for (const owner of ["", "ac me", "acme/other", "../acme", "acme\n", " acme"]) expect(salvageStory(jobText(jobOf({ ...story, owner })))).toBeUndefined();
    for (const repo of ["", "wid gets", "widgets#1", "widgets\n", "\nwidgets"]) expect(salvageStory(jobText(jobOf({ ...story, repo })))).toBeUndefined();
    for (const issueNumber of [0, -1, 1.5]) expect(salvageStory(jobText(jobOf({ ...story, issueNumber })))).toBeUndefined();
    expect(salvageStory(jobText(jobOf({ ...story, issueNumber: 1 })))).toEqual({ ...story, issueNumber: 1 });
  });
});

describe("quarantineFile", () => {
  it("moves the file into queue/quarantine/, numbering a name that is taken, and lists them by name", async () => {
    const { dir, remove } = await tempDir("harness-quarantine-");
    try {
      const jobs = join(dir, "jobs");
      mkdirSync(jobs);
      expect(await listQuarantine(dir)).toEqual([]);
      const texts = ["", jobText(jobOf(story)), "{"];
      const moved = [];
      for (const text of texts) {
        writeFileSync(join(jobs, "a.json"), text);
        moved.push(await quarantineFile(dir, jobs, "a.json", `reason ${moved.length}`));
      }
      expect(moved).toEqual([
        { file: "a.json", reason: "reason 0" },
        { file: "a.json.1", reason: "reason 1", story },
        { file: "a.json.2", reason: "reason 2" },
      ]);
      expect(readdirSync(jobs)).toEqual([]);
      expect(await listQuarantine(dir)).toEqual(["a.json", "a.json.1", "a.json.2"]);
      for (const [n, name] of ["a.json", "a.json.1", "a.json.2"].entries()) expect(readFileSync(join(quarantineDir(dir), name), "utf8")).toBe(texts[n]);
    } finally {
      await remove();
    }
  });

  it("tells nothing of a file already gone", async () => {
    const { dir, remove } = await tempDir("harness-quarantine-");
    try {
      mkdirSync(join(dir, "jobs"));
      expect(await quarantineFile(dir, join(dir, "jobs"), "gone.json", "torn")).toBeUndefined();
    } finally {
      await remove();
    }
  });

  it("moves an entry it cannot read as a file all the same: only a vanished one is let go", async () => {
    const { dir, remove } = await tempDir("harness-quarantine-");
    try {
      const jobs = join(dir, "jobs");
      mkdirSync(join(jobs, "odd.json"), { recursive: true });
      expect(await quarantineFile(dir, jobs, "odd.json", "not a file")).toEqual({ file: "odd.json", reason: "not a file" });
      expect(readdirSync(jobs)).toEqual([]);
    } finally {
      await remove();
    }
  });

  it("fails to list a quarantine that is not a folder, rather than report it empty", async () => {
    const { dir, remove } = await tempDir("harness-quarantine-");
    try {
      writeFileSync(quarantineDir(dir), "");
      await expect(listQuarantine(dir)).rejects.toMatchObject({ code: "ENOTDIR" });
    } finally {
      await remove();
    }
  });
});
