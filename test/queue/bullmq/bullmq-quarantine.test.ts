/**
 * A BullMQ job whose data is not a story job (another version wrote it, or it was damaged) is
 * set aside in Redis, never dropped: kept whole with the reason naming the field, told to the
 * App, shown by `harness status`, and the queue goes on with the next job. Against a real
 * redis-server; waits poll under generous hang guards.
 */
import { jest } from "@jest/globals";
import { Queue } from "bullmq";
import { main } from "../../../src/cli.js";
import { renderQuarantinedJob } from "../../../src/github/report/index.js";
import { BullmqQueue } from "../../../src/queue/bullmq/index.js";
import type { QuarantinedJob } from "../../../src/queue/index.js";
import type { HarnessStatus } from "../../../src/status/index.js";
import { redisForFile } from "../../support/redis.js";
import { makeTempDir, removeTempDirs } from "../../support/tmp.js";
import { makeJob } from "../helpers.js";
import { until } from "../../support/poll.js";

jest.setTimeout(300_000);

const redis = redisForFile();
afterAll(() => {
  removeTempDirs();
});

describe("BullMQ adapter: a job that is not a story job", () => {
  it("is set aside in Redis with its data and the field named, told, shown by harness status, and the next job runs", async () => {
    // The CLI reads the default key prefix; this test owns it on its own server.
    const queue = await BullmqQueue.open({ url: redis.url, log: { error: () => undefined } });
    const raw = new Queue("stories", { connection: { url: redis.url }, prefix: "harness" });
    try {
      const told: QuarantinedJob[] = [];
      queue.listen({ onQuarantine: (quarantined) => told.push(quarantined) });
      const ran: number[] = [];
      queue.start(async (lease) => {
        ran.push(lease.job.issue.number);
      });
      // As an older or newer serve might write it: a kind this worker does not know.
      const damaged = { ...makeJob(5), kind: "rebuild-everything" };
      await raw.add("story", damaged, { jobId: "story-acme%2Fwidgets%235" });
      await queue.enqueue(makeJob(6));
      await until("the damaged job set aside and the next one run", () => told.length === 1 && ran.includes(6));
      expect(ran).toEqual([6]);
      const [notice] = told;
      expect(notice).toMatchObject({ reason: expect.stringContaining("$.kind"), story: { installationId: 1, owner: "acme", repo: "widgets", issueNumber: 5 } });
      expect(notice?.kept).toContain("harness:stories:harness:quarantine");
      expect(renderQuarantinedJob(notice?.file ?? "", notice?.reason ?? "", notice?.kept)).toContain(`set aside in \`${notice?.kept ?? ""}\``);

      // Kept whole, never lost: the record holds the data as BullMQ had it.
      const { records, total } = await queue.quarantine.list();
      expect(total).toBe(1);
      expect(records[0]).toMatchObject({ jobId: "story-acme%2Fwidgets%235", worker: queue.reports.self, reason: notice?.reason });
      expect(JSON.parse(records[0]?.data ?? "null")).toEqual(damaged);
      await until("the queue drained", async () => (await queue.snapshot()).length === 0);

      let out = "";
      const code = await main(["status", "--json"], {
        stdout: (text) => (out += text),
        stderr: (text) => (out += text),
        cwd: process.cwd(),
        env: { HARNESS_HOME: makeTempDir("harness-quarantine-operator-"), HARNESS_QUEUE: redis.url },
      });
      expect(code).toBe(0);
      const status = JSON.parse(out) as HarnessStatus;
      expect(status.quarantined).toEqual([
        { file: records[0]?.entry, story: "acme/widgets#5", worker: queue.reports.self, reason: notice?.reason, inRedis: true },
      ]);
      let text = "";
      await main(["status"], {
        stdout: (chunk) => (text += chunk),
        stderr: (chunk) => (text += chunk),
        cwd: process.cwd(),
        env: { HARNESS_HOME: makeTempDir("harness-quarantine-operator-"), HARNESS_QUEUE: redis.url },
      });
      expect(text).toContain("Quarantined jobs (1), in Redis or each worker's queue/quarantine/");
      expect(text).toMatch(/redis story-acme%2Fwidgets%235\.\d+ {2}\(acme\/widgets#5\) {2}on \S+ {2}why: \$\.kind /);
    } finally {
      await raw.close();
      await queue.close();
    }
  });
});
