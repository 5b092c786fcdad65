/** Repositories, deliveries and probes shared by the end-to-end scenarios. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  deliverWebhook,
  issueCommentCreatedPayload,
  issuesLabeledPayload,
  signedDelivery,
  type CheckRunRecord,
  type FakeGitHub,
  type PullRecord,
} from "../support/fake-github/index.js";
import { type RunningApp } from "./app-process.js";
import { storyDirName } from "../../src/workspace/index.js";
import { decodeChunk } from "../../src/queue/wal/index.js";
import { eventually } from "../support/poll.js";

export const OWNER = "acme";

/** Where the App keeps the runs of issue `number` of `OWNER/repo`. */
export function storyRunsDir(home: string, repo: string, number: number): string {
  return join(home, "runs", storyDirName(`${OWNER}/${repo}#${number}`));
}
export const STATUS_MARKER = "<!-- story-harness:status -->";
export const CHECK_NAMES = ["harness / provision", "harness / verifier", "harness / clean-clone", "harness / integrity", "harness / story"];

/**
 * A scripted agent committed in the fake repository: each seat does its small part, so the
 * suite (`test -f feature.txt`) passes where the work stands and in the clean clone.
 * With a marker folder, the implementer of the first run waits until the test releases it.
 */
export const AGENT_SCRIPT = `#!/bin/sh
markers="$1"
# What an agent can see of its environment, kept for the leak checks.
env > "$HARNESS_ARTIFACT_DIR/env-$HARNESS_STAGE.txt"
case "$HARNESS_STAGE" in
  implementer)
    if [ -n "$markers" ] && [ ! -f "$markers/started" ]; then
      : > "$markers/started"
      i=0
      while [ ! -f "$markers/release" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
    fi
    echo hello > feature.txt ;;
  tester) mkdir -p tests && echo 'test -f feature.txt' > tests/check.sh ;;
  verifier) printf '{"verdict":"pass","findings":["feature.txt is there"]}\\n' > "$HARNESS_ARTIFACT_DIR/verdict.json" ;;
  documenter) echo "Documented." >> README.md ;;
esac
`;

/** `.github/harness.yml` for the scripted agent; `provision` defaults to a no-op. */
export function harnessYml(options: { provision?: string; markers?: string } = {}): string {
  const agentArgs = options.markers ? ` '${options.markers}'` : "";
  return [
    "agent:",
    `  command: sh .harness-test/agent.sh${agentArgs}`,
    "test:",
    "  command: test -f feature.txt",
    "provision:",
    `  command: ${JSON.stringify(options.provision ?? "true")}`,
    "",
  ].join("\n");
}

/** Adds a repository with the scripted agent and `config` as `.github/harness.yml`. */
export async function addStoryRepo(fake: FakeGitHub, name: string, config: string | undefined): Promise<void> {
  const files: Record<string, string> = { "README.md": `# ${name}\n`, ".harness-test/agent.sh": AGENT_SCRIPT };
  if (config !== undefined) files[".github/harness.yml"] = config;
  await fake.addRepository({ owner: OWNER, name, files });
}

/** Delivers a signed `issues.labeled` for a new issue; returns the issue number and the answer. */
export async function labelNewIssue(
  fake: FakeGitHub,
  app: RunningApp,
  name: string,
  title: string,
  sender = OWNER,
  body = `As a user I want ${title}.`,
): Promise<{ number: number; status: number; deliveryId: string }> {
  const issue = fake.createIssue(OWNER, name, { title, body, user: sender });
  const payload = issuesLabeledPayload(fake, { owner: OWNER, name, number: issue.number, label: "story", sender });
  const delivery = signedDelivery("issues", payload, fake.webhookSecret);
  const answer = await deliverWebhook(app.webhookUrl, delivery);
  return { number: issue.number, status: answer.status, deliveryId: delivery.id };
}

/** Posts `body` as `user`'s comment on `number` and delivers the webhook; returns the answer status and delivery id. */
export async function commentAs(
  fake: FakeGitHub,
  app: RunningApp,
  name: string,
  number: number,
  user: string,
  body: string,
): Promise<{ status: number; deliveryId: string }> {
  const comment = fake.addComment(OWNER, name, number, { body, user });
  const payload = issueCommentCreatedPayload(fake, { owner: OWNER, name, comment });
  const delivery = signedDelivery("issue_comment", payload, fake.webhookSecret);
  const answer = await deliverWebhook(app.webhookUrl, delivery);
  return { status: answer.status, deliveryId: delivery.id };
}

export function storyPull(fake: FakeGitHub, name: string, issue: number): PullRecord | undefined {
  return fake.state.pulls.find((pull) => pull.repo === `${OWNER}/${name}` && pull.headRef === `harness/story-${issue}`);
}

/** The latest check run of each name on `sha`. */
export function checksOn(fake: FakeGitHub, name: string, sha: string): Map<string, CheckRunRecord> {
  const runs = new Map<string, CheckRunRecord>();
  for (const run of fake.state.checkRuns) if (run.repo === `${OWNER}/${name}` && run.headSha === sha) runs.set(run.name, run);
  return runs;
}

/**
 * Waits until the story's `harness / story` check run on the branch head is completed; returns it with the head.
 * The branch head is asked of git (a process) only once the fake holds a completed story check
 * run of this issue: polled every 20 ms, a process each time would load the machine whose
 * throughput the tests and the scale-out bench measure.
 */
export async function storyEnd(fake: FakeGitHub, name: string, issue: number, timeoutMs = 90_000): Promise<{ head: string; story: CheckRunRecord }> {
  const ended = (run: CheckRunRecord): boolean =>
    run.repo === `${OWNER}/${name}` &&
    run.name === "harness / story" &&
    run.status === "completed" &&
    (run.externalId === null || run.externalId === `story-${issue}`);
  return eventually(
    `story ${name}#${issue} to end`,
    async () => {
      if (!fake.state.checkRuns.some(ended)) return undefined;
      const head = await fake.branchHead(OWNER, name, `harness/story-${issue}`);
      if (!head) return undefined;
      const story = checksOn(fake, name, head).get("harness / story");
      return story?.status === "completed" ? { head, story } : undefined;
    },
    timeoutMs,
  );
}

/**
 * Waits until the App's log holds `text`. The App writes its JSON lines in batches (a line may
 * wait up to LOG_FLUSH_MS), so a line about something that just happened is polled for.
 */
export async function logged(app: Pick<RunningApp, "log">, text: string): Promise<void> {
  await eventually(`the App to log ${JSON.stringify(text)}`, async () => ((await app.log()).includes(text) ? true : undefined), 20_000);
}

/** Waits for a log line of the App about a delivery. */
export async function loggedDelivery(app: RunningApp, deliveryId: string): Promise<Record<string, unknown>> {
  return eventually(
    `the App to log delivery ${deliveryId}`,
    async () => {
      for (const line of (await app.log()).split("\n")) {
        if (!line.includes(deliveryId) || !line.startsWith("{")) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (entry.deliveryId === deliveryId && typeof entry.action === "string") return entry;
      }
      return undefined;
    },
    20_000,
  );
}

/** Every file under `dir` whose bytes contain any of `needles`. */
export function filesContaining(dir: string, needles: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (path: string): void => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path)) walk(join(path, entry));
      return;
    }
    if (!stat.isFile()) return;
    const bytes = readFileSync(path);
    if (needles.some((needle) => bytes.includes(needle))) found.push(path);
  };
  walk(dir);
  return found;
}

/**
 * Waits until the App's queue holds no job (the runner finished, pushed, and recorded its reports
 * in the outbox, which may still be delivering them: see {@link reportsDelivered}): no job
 * file, and no job in its write-ahead log that is not done (a queued job has no file until a
 * runner claims it). The log is read first: a segment is removed only once each of its jobs is
 * done or has its file, so a job that leaves the log meanwhile is found among the files.
 */
export async function queueDrained(home: string): Promise<void> {
  await eventually("the queue to drain", () => {
    const logged = loggedJobs(home);
    const dir = join(home, "queue", "jobs");
    const jobs = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".json")) : [];
    return jobs.length === 0 && logged.length === 0 ? true : undefined;
  });
}

/**
 * Waits until the App's stories are done and reported: the queue drained (each job ended once
 * its work was pushed and its end reports recorded in the outbox), then the outbox holds no write
 * still waiting for GitHub (the reports a job handed off were delivered). What a test that reads
 * the status comment, the labels or the draft flag after a story's end waits for.
 */
export async function reportsDelivered(home: string): Promise<void> {
  await queueDrained(home);
  await eventually("the outbox to deliver the stories' reports", () => (pendingOutboxWrites(home).length === 0 ? true : undefined));
}

/** The outbox's entries (file names) in `home` that still wait for GitHub. */
export function pendingOutboxWrites(home: string): string[] {
  const dir = join(home, "outbox");
  const pending: string[] = [];
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    if (!name.endsWith(".json")) continue;
    let text: string;
    try {
      text = readFileSync(join(dir, name), "utf8");
    } catch (error) {
      // Delivered and removed since the listing.
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    if ((JSON.parse(text) as { state?: string }).state === "pending") pending.push(name);
  }
  return pending;
}

/** The ids of the jobs the queue's write-ahead log holds and has not tombstoned (done or quarantined). */
export function loggedJobs(home: string): string[] {
  const dir = join(home, "queue", "wal");
  const jobs = new Set<string>();
  const done = new Set<string>();
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    if (!name.endsWith(".log")) continue;
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(dir, name));
    } catch (error) {
      // A segment removed since the listing held nothing queued: its jobs were done or had files.
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    for (const entry of decodeChunk(bytes).entries) (entry.t === "job" ? jobs : done).add(entry.id);
  }
  return [...jobs].filter((id) => !done.has(id));
}

/**
 * The markers folder is how a test and the scripted agent wait for each other; it lies outside
 * the worktree, so the App is told to let its sandboxed steps write it, as an operator would
 * (HARNESS_SANDBOX_WRITE). The sandbox is otherwise the default one.
 */
export function sandboxGrant(markers: string): Record<string, string> {
  return { HARNESS_SANDBOX_WRITE: markers };
}
