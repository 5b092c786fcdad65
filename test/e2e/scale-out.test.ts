/**
 * End to end on Redis: one `harness serve` (webhooks only) and two `harness worker` processes
 * against the fake GitHub. Ten stories across two installations complete once each on both
 * workers within the per-installation limit; a worker killed with SIGKILL mid-story has its
 * story finished by the other; a restart of `serve` loses no queued story; the end reports a
 * worker handed to its outbox before it was killed are delivered when it starts again.
 */
import { jest } from "@jest/globals";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deliverWebhook, issuesLabeledPayload, signedDelivery } from "../support/fake-github/index.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { startApp, type RunningApp } from "./app-process.js";
import { AGENT_SCRIPT, harnessYml, OWNER, pendingOutboxWrites, storyEnd, storyPull, storyRunsDir } from "./scenario.js";
import { startWorker, tearDown, type RunningWorker } from "./worker-process.js";
import { eventually } from "../support/poll.js";

// Hang guards, generous for a loaded machine; every wait polls for its condition.
jest.setTimeout(900_000);
const STORY_GUARD_MS = 600_000;

const SECOND_INSTALLATION = 778;
const SLOTS = 2;
const STATUS_TOKEN = "scale-out-status";

/** The scripted agent, whose implementer records when it ran (start and end, in ns) in `<intervals>`. */
const TIMED_AGENT = AGENT_SCRIPT.replace(
  "    echo hello > feature.txt ;;",
  `    if [ -n "$2" ]; then echo "start $3 $$ $(date +%s%N)" >> "$2"; sleep 1; echo "end $3 $$ $(date +%s%N)" >> "$2"; fi
    echo hello > feature.txt ;;`,
).replace('markers="$1"', 'markers="$1"\n# $2: the intervals file, $3: the label of the installation');

describe("scale-out: serve and two workers on Redis", () => {
  let redis: RedisServer;
  let root: string;
  const processes: Array<{ stop: () => Promise<unknown> }> = [];
  // The agents' folders outside their worktrees (intervals, markers) are granted to the sandbox.
  const env = (): Record<string, string> => ({
    HARNESS_QUEUE: redis.url,
    HARNESS_INSTALLATION_SLOTS: String(SLOTS),
    HARNESS_LEASE_MS: "10000",
    HARNESS_SANDBOX_WRITE: `${join(root, "shared")}:${join(root, "markers")}`,
  });

  // A test that failed leaves its processes: they must not take the next test's stories. Declared before the fake's
  // hooks (jest runs after-hooks in the order they are declared): every process has stopped when the fake checks what it refused.
  afterEach(async () => {
    for (const running of processes.splice(0).reverse()) await running.stop();
  });
  // The fake is the fixture's to check and close, after this.
  afterAll(() => tearDown({ root, processes, fake: undefined, redis }));

  const fake = useFakeGitHub({ moreInstallations: [SECOND_INSTALLATION] });

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-e2e-scale-"));
    mkdirSync(join(root, "shared"));
    mkdirSync(join(root, "markers"));
    redis = await startRedis();
  });

  async function addRepo(name: string, agentArgs: string[]): Promise<void> {
    const yml = harnessYml().replace("sh .harness-test/agent.sh", `sh .harness-test/agent.sh ${agentArgs.map((arg) => `'${arg}'`).join(" ")}`);
    await fake.addRepository({ owner: OWNER, name, files: { "README.md": `# ${name}\n`, ".harness-test/agent.sh": TIMED_AGENT, ".github/harness.yml": yml } });
  }

  /** Labels a new issue of `name` as delivered for `installation`. */
  async function label(app: RunningApp, name: string, title: string, installation?: number): Promise<number> {
    const issue = fake.createIssue(OWNER, name, { title, body: `As a user I want ${title}.`, user: OWNER });
    const payload = issuesLabeledPayload(fake, { owner: OWNER, name, number: issue.number, label: "story", sender: OWNER }) as Record<string, unknown>;
    if (installation !== undefined) payload.installation = { ...(payload.installation as object), id: installation };
    const answer = await deliverWebhook(app.webhookUrl, signedDelivery("issues", payload, fake.webhookSecret));
    expect(answer.status).toBe(200);
    return issue.number;
  }

  async function serve(name: string): Promise<RunningApp> {
    const app = await startApp({ fake, home: join(root, `home-${name}`), workDir: root, env: env(), dotenv: { HARNESS_STATUS_TOKEN: STATUS_TOKEN } });
    processes.push(app);
    return app;
  }
  async function worker(name: string): Promise<RunningWorker> {
    const started = await startWorker({ fake, name, home: join(root, `home-${name}`), workDir: root, env: { ...env(), HARNESS_CONCURRENCY: "2" } });
    processes.push(started);
    return started;
  }
  const finishedBy = async (workers: RunningWorker[]): Promise<Map<string, string[]>> => {
    const by = new Map<string, string[]>();
    for (const each of workers) {
      for (const entry of await each.entries("story finished")) by.set(String(entry.story), [...(by.get(String(entry.story)) ?? []), each.name]);
    }
    return by;
  };

  it("runs ten stories of two installations once each, on both workers, within the installation limit", async () => {
    const intervals = join(root, "shared", "intervals.log");
    appendFileSync(intervals, "");
    await addRepo("alpha", ["", intervals, "first"]);
    await addRepo("beta", ["", intervals, "second"]);
    const app = await serve("serve");
    const workers = [await worker("w1"), await worker("w2")];
    const stories: Array<[string, number]> = [];
    for (let index = 0; index < 5; index += 1) {
      stories.push(["alpha", await label(app, "alpha", `Alpha ${index}`)]);
      stories.push(["beta", await label(app, "beta", `Beta ${index}`, SECOND_INSTALLATION)]);
    }
    for (const [name, number] of stories) expect((await storyEnd(fake, name, number, STORY_GUARD_MS)).story.conclusion).toBe("success");
    const by = await eventually(
      "every story's end logged by a worker",
      async () => {
        const logged = await finishedBy(workers);
        return logged.size === stories.length ? logged : undefined;
      },
      STORY_GUARD_MS,
    );
    // None twice, both workers used.
    expect([...by.values()].every((names) => names.length === 1)).toBe(true);
    expect(new Set([...by.values()].flat())).toEqual(new Set(["w1", "w2"]));
    // The serve process ran none.
    expect(await app.log()).not.toContain('"msg":"story finished"');
    // Never more than SLOTS implementers of one installation at once (from the agents' own clock).
    const events = readFileSync(intervals, "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split(" "));
    for (const installation of ["first", "second"]) {
      const mine = events.filter(([, label]) => label === installation).map(([kind, , , at]) => [BigInt(at ?? "0"), kind === "start" ? 1 : -1] as const);
      mine.sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1));
      let now = 0;
      let most = 0;
      for (const [, delta] of mine) {
        now += delta;
        most = Math.max(most, now);
      }
      expect([installation, mine.length]).toEqual([installation, 10]);
      expect(most).toBeLessThanOrEqual(SLOTS);
    }
    // Each job ended once its end reports were in its worker's outbox; ready-for-review is the last of them.
    await eventually(
      "the workers' outboxes to deliver every end report",
      () => (workers.every((each) => pendingOutboxWrites(each.home).length === 0) ? true : undefined),
      STORY_GUARD_MS,
    );
    for (const [name, number] of stories) expect(storyPull(fake, name, number)?.draft).toBe(false);
    // The status endpoint of serve shows both workers, from their reports in Redis, and nothing left anywhere.
    const status = await eventually(
      "both workers reporting through Redis",
      async () => {
        const answer = await fetch(`http://127.0.0.1:${app.port}/harness/status.json`, { headers: { authorization: `Bearer ${STATUS_TOKEN}` } });
        const body = (await answer.json()) as {
          workers?: Array<{ pid: number; live: boolean }>;
          queued: unknown[];
          running: unknown[];
          undelivered: unknown[];
          quarantined: unknown[];
        };
        return body.workers?.length === 2 && body.workers.every((each) => each.live) && body.undelivered.length === 0 ? body : undefined;
      },
      STORY_GUARD_MS,
    );
    expect(status.workers?.map((each) => [each.pid, each.live]).sort()).toEqual(workers.map((each) => [each.pid, true]).sort());
    expect([status.queued, status.running, status.undelivered, status.quarantined]).toEqual([[], [], [], []]);
    fake.assertNoUnexpectedRequests();
    for (const running of processes.splice(0).reverse()) await running.stop();
  });

  it("finishes on another worker the story of a worker killed with SIGKILL", async () => {
    const markers = join(root, "markers");
    await addRepo("gamma", [markers]);
    const app = await serve("serve2");
    const workers = [await worker("k1"), await worker("k2")];
    const number = await label(app, "gamma", "Survive a lost worker");
    await eventually("the implementer to start", () => (existsSync(join(markers, "started")) ? true : undefined), STORY_GUARD_MS);
    const holder = await eventually(
      "the worker running it",
      () => workers.find((each) => existsSync(storyRunsDir(each.home, "gamma", number))),
      STORY_GUARD_MS,
    );
    const survivor = workers.find((each) => each !== holder);
    expect((await holder.kill9()).signal).toBe("SIGKILL");
    processes.splice(processes.indexOf(holder), 1);
    const { story } = await storyEnd(fake, "gamma", number, STORY_GUARD_MS);
    expect(story.conclusion).toBe("success");
    const finished = await eventually(
      "the survivor to log the story's end",
      async () => {
        const entries = (await survivor?.entries("story finished")) ?? [];
        return entries.length > 0 ? entries.map((entry) => entry.story) : undefined;
      },
      STORY_GUARD_MS,
    );
    expect(finished).toEqual([`${OWNER}/gamma#${number}`]);
    expect(fake.state.pulls.filter((pull) => pull.repo === `${OWNER}/gamma`)).toHaveLength(1);
    fake.assertNoUnexpectedRequests();
    for (const running of processes.splice(0).reverse()) await running.stop();
  });

  it("loses no story queued while serve restarts", async () => {
    await addRepo("delta", []);
    const first = await serve("serve3");
    const queued = [await label(first, "delta", "Queued before the restart"), await label(first, "delta", "Also queued")];
    expect((await first.kill9()).signal).toBe("SIGKILL");
    processes.splice(processes.indexOf(first), 1);
    const second = await serve("serve4");
    await worker("r1");
    const after = await label(second, "delta", "Labelled after the restart");
    for (const number of [...queued, after]) expect((await storyEnd(fake, "delta", number, STORY_GUARD_MS)).story.conclusion).toBe("success");
    fake.assertNoUnexpectedRequests();
  });

  it("delivers the end reports a worker handed off before it was killed, once it starts again on its own disk", async () => {
    await addRepo("epsilon", []);
    const app = await serve("serve5");
    const first = await worker("h1");
    // GitHub fails the story's last end report (ready for review, its only GraphQL request) for now.
    const badGateway = fake.injectFailure({ method: "POST", path: /^\/api\/graphql$/, failure: { kind: "bad-gateway" } });
    const number = await label(app, "epsilon", "Hand off, then die");
    const key = `${OWNER}/epsilon#${number}`;
    await eventually("the story's job to end", async () => ((await first.entries("story finished")).length > 0 ? true : undefined), STORY_GUARD_MS);
    await eventually("GitHub to fail the ready-for-review", () => (badGateway.served > 0 ? true : undefined), STORY_GUARD_MS);
    // The job is done in Redis; the write waits in the worker's outbox, and the status says whose.
    let lastStatus: unknown;
    const status = await eventually(
      "the job done and its report waiting, as the status shows",
      async () => {
        const answer = await fetch(`http://127.0.0.1:${app.port}/harness/status.json`, { headers: { authorization: `Bearer ${STATUS_TOKEN}` } });
        const body = (await answer.json()) as {
          queued: unknown[];
          running: unknown[];
          undelivered: Array<{ story: string; slot: string; state: string; worker?: string }>;
          reporting: unknown[];
        };
        lastStatus = body;
        // The worker reports every few seconds: a report may still list writes delivered since.
        // Only this story's writes: a worker killed in an earlier case may have left writes of
        // its own story in its report (they wait on its disk, and the status rightly lists them).
        const mine = body.undelivered.filter((entry) => entry.story === key);
        return body.queued.length === 0 && body.running.length === 0 && mine.length === 1 && mine[0]?.slot === "ready-for-review"
          ? { ...body, undelivered: mine, reporting: body.reporting.filter((entry) => (entry as { story?: string }).story === key) }
          : undefined;
      },
      STORY_GUARD_MS,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the last status was ${JSON.stringify(lastStatus)}`);
    });
    expect(status.undelivered).toEqual([
      expect.objectContaining({ story: `${OWNER}/epsilon#${number}`, slot: "ready-for-review", state: "pending", worker: expect.any(String) }),
    ]);
    expect(status.reporting).toEqual([{ story: `${OWNER}/epsilon#${number}`, writes: 1, worker: status.undelivered[0]?.worker }]);
    expect((await first.kill9()).signal).toBe("SIGKILL");
    processes.splice(processes.indexOf(first), 1);
    expect(pendingOutboxWrites(first.home).length).toBeGreaterThan(0);
    expect(storyPull(fake, "epsilon", number)?.draft).toBe(true);

    badGateway.close();
    await worker("h1");
    await eventually(
      "ready for review, from the restarted worker's outbox",
      () => (storyPull(fake, "epsilon", number)?.draft === false ? true : undefined),
      STORY_GUARD_MS,
    );
    await eventually("its outbox to empty", () => (pendingOutboxWrites(first.home).length === 0 ? true : undefined), STORY_GUARD_MS);
    const { story } = await storyEnd(fake, "epsilon", number, STORY_GUARD_MS);
    expect(story.conclusion).toBe("success");
    // Delivered, not run again: one run of the story.
    expect(readdirSync(storyRunsDir(first.home, "epsilon", number))).toHaveLength(1);
    fake.assertNoUnexpectedRequests();
  });
});
