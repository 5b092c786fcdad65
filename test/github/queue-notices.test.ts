/**
 * The queue's notices (a quarantined job file, a job the full disk would not let start) go
 * through the outbox: GitHub refusing them (403 with retry-after, 502) delays them, loses
 * nothing, and one that the data directory cannot record is still delivered from memory.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Outbox } from "../../src/outbox/index.js";
import { githubDelivery, queueNoticeListeners } from "../../src/github/report/index.js";
import type { StoryJob } from "../../src/queue/index.js";
import { storyKey } from "../../src/story-key/index.js";
import { fakeOctokit } from "../support/fake-github/client.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { NAME, OWNER, RecordingLog } from "./fake-setup.js";
import { eventually } from "../support/poll.js";

const dirs: string[] = [];
const outboxes: Outbox[] = [];

// Declared before the fake's: the outboxes close while the fake still answers.
afterAll(async () => {
  for (const outbox of outboxes) await outbox.close();
});
const gh = useFakeGitHub();
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

beforeAll(async () => {
  await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# demo\n" } });
});

async function openOutbox(log: RecordingLog): Promise<{ outbox: Outbox; dir: string }> {
  const root = mkdtempSync(join(tmpdir(), "harness-notices-"));
  dirs.push(root);
  const dir = join(root, "outbox");
  const octokit = fakeOctokit(gh, { installation: true });
  const outbox = await Outbox.open({ dir, deliver: githubDelivery(async () => octokit), log, policy: { baseDelayMs: 10, maxDelayMs: 50 }, tickMs: 20 });
  outboxes.push(outbox);
  outbox.start();
  return { outbox, dir };
}

const commentsOn = (issueNumber: number): string[] => gh.state.commentsOn(OWNER, NAME, issueNumber).map((comment) => comment.body);

function job(issueNumber: number): StoryJob {
  const repository = gh.repositoryJson(OWNER, NAME) as { id: number; clone_url: string };
  return {
    storyKey: storyKey(OWNER, NAME, issueNumber),
    kind: "start",
    installationId: gh.installationId,
    repository: { id: repository.id, owner: OWNER, name: NAME, cloneUrl: repository.clone_url, defaultBranch: "main" },
    issue: { number: issueNumber, title: "Queued", body: "" },
    requestedBy: OWNER,
    deliveryId: `d-${issueNumber}`,
    enqueuedAt: new Date().toISOString(),
  };
}

const enospc = (): Error => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });

describe("queue notices through the outbox", () => {
  it("tells a quarantined job's story once a secondary rate limit (403 retry-after) has passed", async () => {
    const log = new RecordingLog();
    const { outbox, dir } = await openOutbox(log);
    const issue = gh.createIssue(OWNER, NAME, { title: "Torn job", user: OWNER });
    const window = gh.injectFailure({
      method: "POST",
      path: new RegExp(`/issues/${issue.number}/comments$`),
      failure: { kind: "secondary-rate-limit", retryAfterSeconds: 1 },
    });
    try {
      queueNoticeListeners({ outbox, log }).onQuarantine?.({
        file: "000000000000001-000001-deadbeef.json",
        reason: "$.job.kind: must be equal to one of the allowed values",
        story: { installationId: gh.installationId, owner: OWNER, repo: NAME, issueNumber: issue.number },
      });
      await eventually("the rate limit to be met", () => (window.served > 0 ? true : undefined));
      // Refused, not lost: the notice waits on disk.
      expect(commentsOn(issue.number)).toEqual([]);
      expect(readdirSync(dir).filter((name) => name.endsWith(".json"))).toHaveLength(1);
      expect(outbox.hasPending()).toBe(true);
    } finally {
      window.close();
    }
    const told = await eventually("the notice", () =>
      commentsOn(issue.number).find((body) => body.includes("queue/quarantine/000000000000001-000001-deadbeef.json")),
    );
    expect(told).toContain("$.job.kind");
    await eventually("the outbox to empty", () => (readdirSync(dir).filter((name) => name.endsWith(".json")).length === 0 ? true : undefined));
    expect(commentsOn(issue.number)).toHaveLength(1);
    expect(log.lines.some((line) => line.message === "outbox: GitHub refused a write; it is retried")).toBe(true);
    gh.assertNoUnexpectedRequests();
  });

  it("tells a story its job cannot start on a full disk once a 502 has passed, even when the outbox cannot record it", async () => {
    const log = new RecordingLog();
    const { outbox, dir } = await openOutbox(log);
    const issue = gh.createIssue(OWNER, NAME, { title: "No room", user: OWNER });
    // The data directory refuses writes as a full one would: the outbox's folder is now a file.
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, "");
    const window = gh.injectFailure({ method: "POST", path: new RegExp(`/issues/${issue.number}/comments$`), failure: { kind: "bad-gateway" } });
    try {
      queueNoticeListeners({ outbox, log }).onWriteFailure?.(job(issue.number), enospc());
      await eventually("the 502", () => (window.served > 0 ? true : undefined));
      expect(commentsOn(issue.number)).toEqual([]);
    } finally {
      window.close();
    }
    const told = await eventually("the notice", () => commentsOn(issue.number).find((body) => body.includes("ENOSPC")));
    expect(told).toContain("stays queued");
    expect(commentsOn(issue.number)).toHaveLength(1);
    expect(log.lines.some((line) => line.message === "outbox: a notice could not be recorded on disk; it is tried from memory")).toBe(true);
    expect(log.lines.some((line) => line.message === "queue: a job could not be claimed; it stays queued")).toBe(true);
    gh.assertNoUnexpectedRequests();
  });
});
