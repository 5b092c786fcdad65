/**
 * The status page as an operator meets it: the App runs a story whose implementer is held,
 * and a real headless Chromium loads `GET /harness` and reads what it shows. Then the JSON
 * view, the refusals, and the renderer's escaping.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jest } from "@jest/globals";
import { renderStatusPage, type StatusReport } from "../../src/status/index.js";
import { startApp, type RunningApp } from "../e2e/app-process.js";
import { addStoryRepo, harnessYml, labelNewIssue, sandboxGrant, storyEnd } from "../e2e/scenario.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { dumpDom, screenshot } from "./chromium.js";
import { eventually } from "../support/poll.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

jest.setTimeout(240_000);
const TOKEN = "status-token-for-tests";

describe("GET /harness", () => {
  let app: RunningApp;
  let root: string;
  let markers: string;

  // Declared before the fake's teardown (jest runs afterAll hooks in order): the App stops while the fake still answers.
  afterAll(async () => {
    if (markers && existsSync(markers)) writeFileSync(join(markers, "release"), "");
    await app?.stop();
    removeTempDirs();
  });

  const fake = useFakeGitHub();

  beforeAll(async () => {
    root = makeTempDir("harness-status-");
    markers = join(root, "markers");
    mkdirSync(markers);
    app = await startApp({ fake, home: join(root, "home"), workDir: root, env: sandboxGrant(markers), dotenv: { HARNESS_STATUS_TOKEN: TOKEN } });
  });

  it("shows a running story with its stage, attempt and live log in a real browser, then its outcome", async () => {
    await addStoryRepo(fake, "shown", harnessYml({ markers }));
    const story = await labelNewIssue(fake, app, "shown", "Wave <b>hello</b>");
    await eventually("the implementer to start", () => (existsSync(join(markers, "started")) ? true : undefined));
    const page = `http://127.0.0.1:${app.port}/harness?token=${TOKEN}`;
    const dom = await eventually(
      "the page to show the running stage",
      async () => {
        const html = await dumpDom(page);
        return html.includes("implementer · attempt 1/") ? html : undefined;
      },
      180_000,
    );
    expect(dom).toContain("<h2>Queue (1)</h2>");
    expect(dom).toMatch(/<span class="running">running<\/span>/);
    expect(dom).toContain(`acme/shown#${story.number}`);
    expect(dom).toContain("Wave &lt;b&gt;hello&lt;/b&gt;");
    expect(dom).not.toContain("<b>hello</b>");
    expect(dom).toContain("<h2>Live log</h2>");
    if (process.env.HARNESS_STATUS_SCREENSHOT) await screenshot(page, process.env.HARNESS_STATUS_SCREENSHOT);

    writeFileSync(join(markers, "release"), "");
    await storyEnd(fake, "shown", story.number);
    const after = await eventually(
      "the outcome on the page",
      async () => {
        const html = await dumpDom(page);
        return html.includes("<h2>Recent outcomes (1)</h2>") && html.includes("<h2>Queue (0)</h2>") ? html : undefined;
      },
      180_000,
    );
    expect(after).toMatch(/<span class="completed">completed<\/span>/);
  });

  it("answers JSON with the token, 401 without it, 405 to a write", async () => {
    const base = `http://127.0.0.1:${app.port}/harness`;
    const json = await fetch(`${base}/status.json`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(json.status).toBe(200);
    const report = (await json.json()) as StatusReport;
    expect(Array.isArray(report.jobs) && Array.isArray(report.runs) && Array.isArray(report.quarantined)).toBe(true);
    expect(report.runs.length).toBeGreaterThan(0);
    expect((await fetch(base)).status).toBe(401);
    expect((await fetch(`${base}?token=wrong`)).status).toBe(401);
    expect((await fetch(`${base}/status.json`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await fetch(`${base}?token=${TOKEN}`, { method: "POST" })).status).toBe(405);
  });
});

describe("the status page without HARNESS_STATUS_TOKEN", () => {
  const fake = useFakeGitHub();

  it("is off, and says how to turn it on", async () => {
    const root = makeTempDir("harness-status-off-");
    const app = await startApp({ fake, home: join(root, "home"), workDir: root });
    try {
      const response = await fetch(`http://127.0.0.1:${app.port}/harness`);
      expect(response.status).toBe(404);
      expect(await response.text()).toContain("set HARNESS_STATUS_TOKEN");
    } finally {
      await app.stop();
    }
  });
});

describe("renderStatusPage", () => {
  it("escapes every repository-supplied text and links to the configured GitHub", () => {
    const report: StatusReport = {
      generatedAt: "2026-12-01T10:00:00.000Z",
      jobs: [
        {
          jobId: "j1",
          state: "queued",
          interruptions: 0,
          job: {
            storyKey: "o/r#7",
            kind: "start",
            installationId: 1,
            requestedBy: "alice",
            deliveryId: "d",
            enqueuedAt: "2026-12-01T09:59:00.000Z",
            repository: { id: 1, owner: "o", name: "r", cloneUrl: "https://example.invalid/o/r.git", defaultBranch: "main" },
            issue: { number: 7, title: `"><img src=x onerror=alert(1)>`, body: "" },
          },
        } as StatusReport["jobs"][number],
      ],
      runs: [
        {
          story: "7",
          runId: "r1",
          title: "t",
          outcome: "running",
          attempt: 1,
          maxAttempts: 3,
          stage: "tester",
          startedAt: "a",
          updatedAt: "b",
          tasks: [],
          liveTail: { file: "logs/x.log", text: "</pre><script>x()</script>" },
        },
      ],
      quarantined: [{ file: "<bad>.json" }],
      undelivered: [{ story: "o/r#7", slot: "check:<x>", kind: "check-run", state: "pending", attempts: 2, lastError: "<502>" }],
      reporting: [{ story: "o/<r>#8", writes: 2 }],
      app: { running: true, pid: 1 },
      queued: [],
      running: [],
    };
    const html = renderStatusPage(report, { webBase: "https://ghe.example.invalid" });
    expect(html).not.toMatch(/<img|<script|<bad>|<x>|<502>/);
    expect(html).toContain("<h2>Undelivered GitHub writes (1)</h2>");
    expect(html).toContain("<h2>Reporting (1): job done, end reports waiting in the outbox</h2>");
    expect(html).toContain("<td>o/&lt;r&gt;#8</td><td>2</td>");
    expect(html).toContain("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain('href="https://ghe.example.invalid/o/r/issues/7"');
    expect(html).toContain("tester · attempt 1/3");
    expect(html).toContain('<meta http-equiv="refresh" content="5">');
  });
});
