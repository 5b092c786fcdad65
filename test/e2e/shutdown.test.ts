/**
 * End to end: `docker stop` gives the App 10 s. SIGTERM while provisioning runs must reach the
 * provisioning command (through the job's stop signal), end it, record the run as interrupted,
 * and let the App exit on its own (meant to be well within 5 s; the test asserts only that it
 * exits by itself, a time being no test's to assert); the job stays queued for the next start.
 */
import { jest } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.js";
import { processWithTag, waitFor } from "../support/tmp.js";
import { eventually, startApp } from "./app-process.js";
import { addStoryRepo, harnessYml, labelNewIssue, sandboxGrant, storyRunsDir } from "./scenario.js";

jest.setTimeout(120_000);

describe("SIGTERM while a story provisions", () => {
  let fake: FakeGitHub;
  let root: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-e2e-shutdown-"));
    fake = await startFakeGitHub();
  });

  afterAll(async () => {
    await fake?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("ends provisioning, records the run as interrupted and exits by itself, leaving the job queued", async () => {
    const home = join(root, "home");
    const markers = join(root, "markers");
    mkdirSync(markers);
    const tag = "4747";
    await addStoryRepo(fake, "stopping", harnessYml({ provision: `touch '${markers}/provisioning' && sleep ${tag}` }));
    // startApp's stop() sends SIGTERM and SIGKILLs only after a 60 s hang guard: an exit code of 0 means the App stopped by
    // itself. How fast it stops is a timing claim, not this test's: a loaded machine once took it past 5 s.
    const app = await startApp({ fake, home, workDir: root, env: sandboxGrant(markers) });
    const { number } = await labelNewIssue(fake, app, "stopping", "Stop in time");
    await eventually("provisioning to run", () => (existsSync(join(markers, "provisioning")) && processWithTag(`sleep\0${tag}`) ? true : undefined));

    const stopped = await app.stop();
    expect([stopped.exitCode, stopped.signal]).toEqual([0, null]);
    expect(await waitFor(() => !processWithTag(`sleep\0${tag}`), 5_000)).toBe(true);

    const runsDir = storyRunsDir(home, "stopping", number);
    const journal = readdirSync(runsDir).map((run) => readFileSync(join(runsDir, run, "execution-history.ndjson"), "utf8")).join("");
    expect(journal).toContain('"failureClass":"interrupted"');
    expect(journal).not.toContain("workspace-provision-failed");
    expect(readdirSync(join(home, "queue", "jobs")).filter((name) => name.endsWith(".json"))).toHaveLength(1);
    expect(readdirSync(join(home, "run", "processes"))).toEqual([]);
  });
});
