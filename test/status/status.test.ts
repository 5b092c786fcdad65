import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli.js";
import { EmbeddedQueue } from "../../src/queue/index.js";
import { renderStatusText, reportingStories } from "../../src/status/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { makeJob } from "../queue/helpers.js";

afterAll(() => removeTempDirs());

async function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await main(args, { stdout: (text) => (out += text), stderr: (text) => (out += text), cwd: process.cwd(), env });
  return { code, out };
}

describe("harness status", () => {
  it("lists queued jobs, quarantined files and undelivered GitHub writes of HARNESS_HOME, as text and JSON", async () => {
    const home = makeTempDir();
    const queue = await EmbeddedQueue.open({ dir: join(home, "queue") });
    await queue.enqueue(makeJob(4, "d-4"));
    await queue.close();
    mkdirSync(join(home, "queue", "quarantine"), { recursive: true });
    writeFileSync(
      join(home, "queue", "quarantine", "001700000000000-000001-00000009.json"),
      JSON.stringify({ job: { installationId: 1, repository: { owner: "acme", name: "widgets" }, issue: { number: 9 } } }),
    );
    mkdirSync(join(home, "outbox"));
    const now = new Date().toISOString();
    writeFileSync(
      join(home, "outbox", "001700000000000-000001-0000000a.json"),
      JSON.stringify({
        id: "001700000000000-000001-0000000a",
        story: { installationId: 1, owner: "acme", repo: "widgets", issueNumber: 5 },
        slot: "status-comment",
        write: { kind: "status-comment", issueNumber: 6, body: "x" },
        state: "undeliverable",
        attempts: 3,
        lastError: "404: Not Found",
        writer: { pid: 4242, startTime: "b:1" },
        createdAt: now,
        updatedAt: now,
      }),
    );
    const env = { HARNESS_HOME: home };
    const json = await run(["status", "--json"], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toEqual({
      app: { running: false },
      queued: [expect.objectContaining({ story: "acme/widgets#4", kind: "start", interruptions: 0 })],
      running: [],
      quarantined: [{ file: "001700000000000-000001-00000009.json", story: "acme/widgets#9" }],
      undelivered: [
        expect.objectContaining({ story: "acme/widgets#5", slot: "status-comment", state: "undeliverable", attempts: 3, lastError: "404: Not Found" }),
      ],
      // A given-up write is not a story reporting.
      reporting: [],
    });
    const text = await run(["status"], env);
    expect(text.out).toContain("Queued (1)");
    expect(text.out).toContain("acme/widgets#4");
    expect(text.out).toContain("Quarantined jobs (1), in queue/quarantine/");
    expect(text.out).toContain("Undelivered GitHub writes (1)");
    expect((await run(["status", "--help"], env)).out).toContain("GET /harness/status.json");
  });
});

describe("harness status: stories reporting", () => {
  it("lists a story whose job ended with writes pending in an outbox as reporting, not a running story's or a given-up write", () => {
    const pending = (story: string, slot: string, worker?: string) => ({
      story,
      slot,
      kind: "check",
      state: "pending" as const,
      attempts: 0,
      ...(worker ? { worker } : {}),
    });
    const status = {
      app: { running: true, pid: 7 },
      queued: [],
      running: [{ jobId: "j1", story: "acme/widgets#1", kind: "start", enqueuedAt: "2026-12-01T00:00:00.000Z", interruptions: 0 }],
      quarantined: [],
      undelivered: [
        pending("acme/widgets#1", "status-comment"),
        pending("acme/widgets#2", "check:harness / story:r:5"),
        pending("acme/widgets#2", "ready-for-review"),
        pending("acme/widgets#3", "ready-for-review", "host:abc"),
        { story: "acme/widgets#4", slot: "status-comment", kind: "status-comment", state: "undeliverable" as const, attempts: 3 },
      ],
    };
    const reporting = reportingStories(status);
    expect(reporting).toEqual([
      { story: "acme/widgets#2", writes: 2 },
      { story: "acme/widgets#3", writes: 1, worker: "host:abc" },
    ]);
    const text = renderStatusText({ ...status, reporting });
    expect(text).toContain(
      "Reporting (2): job done, end reports waiting in the outbox\n  acme/widgets#2  2 write(s) waiting\n  acme/widgets#3  1 write(s) waiting  on host:abc\n",
    );
    expect(text).toContain("Undelivered GitHub writes (5)");
  });
});
