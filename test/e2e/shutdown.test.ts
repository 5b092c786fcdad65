/**
 * End to end: `docker stop` gives the App 10 s (SIGTERM), Ctrl-C of `npm start` sends SIGINT. Either, while provisioning runs, must reach the
 * provisioning command (through the job's stop signal), end it, record the run as interrupted,
 * and let the App exit on its own (meant to be well within 5 s; the test asserts only that it
 * exits by itself, a time being no test's to assert); the job stays queued for the next start.
 */
import { jest } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processWithTag } from "../support/tmp.js";
import { startApp } from "./app-process.js";
import { addStoryRepo, harnessYml, labelNewIssue, sandboxGrant, storyRunsDir } from "./scenario.js";
import { eventually, until } from "../support/poll.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

jest.setTimeout(120_000);

describe("A stop signal while a story provisions", () => {
  let root: string;

  // Declared before the fake's teardown (jest runs afterAll hooks in order): the App stops while the fake still answers.
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
  });

  const fake = useFakeGitHub();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-e2e-shutdown-"));
  });

  // SIGINT is Ctrl-C of `npm start`: Probot's own SIGINT handler (stop the server, process.exit) must not cut the shutdown short.
  it.each(["SIGTERM", "SIGINT"] as const)(
    "%s ends provisioning, records the run as interrupted and exits by itself, leaving the job queued",
    async (signal) => {
      const home = join(root, `home-${signal}`);
      const markers = join(root, `markers-${signal}`);
      mkdirSync(markers);
      // Unique to this run: the process table is the machine's, and another checkout's run of this test may be going on beside it.
      const tag = `4747.${process.pid}${signal.length}`;
      const repo = `stopping-${signal.toLowerCase()}`;
      await addStoryRepo(fake, repo, harnessYml({ provision: `touch '${markers}/provisioning' && sleep ${tag}` }));
      // startApp's stop() sends SIGTERM and SIGKILLs only after a 60 s hang guard: an exit code of 0 means the App stopped by
      // itself. How fast it stops is a timing claim, not this test's: a loaded machine once took it past 5 s.
      const app = await startApp({ fake, home, workDir: root, env: sandboxGrant(markers) });
      const { number } = await labelNewIssue(fake, app, repo, "Stop in time");
      await eventually("provisioning to run", () => (existsSync(join(markers, "provisioning")) && processWithTag(`sleep\0${tag}`) ? true : undefined));

      const stopped = signal === "SIGTERM" ? await app.stop() : await app.interrupt();
      expect([stopped.exitCode, stopped.signal]).toEqual([0, null]);
      // The App awaited the step's group before exiting, so this is only a hang guard.
      await until("the tagged sleep to end", () => !processWithTag(`sleep\0${tag}`), 30_000);

      const runsDir = storyRunsDir(home, repo, number);
      const journal = readdirSync(runsDir)
        .map((run) => readFileSync(join(runsDir, run, "execution-history.ndjson"), "utf8"))
        .join("");
      expect(journal).toContain('"failureClass":"interrupted"');
      expect(journal).not.toContain("workspace-provision-failed");
      expect(readdirSync(join(home, "queue", "jobs")).filter((name) => name.endsWith(".json"))).toHaveLength(1);
      expect(readdirSync(join(home, "run", "processes"))).toEqual([]);
    },
  );
});
