/**
 * The baseline runs off the critical path: in a checkout of its own, beside provisioning and
 * the implementer (after its agent's first seconds), and settled before the second stage. Shown by ordering through files, never
 * by timing: the implementer and the baseline's test command each wait for the other's marker.
 */
import { existsSync, readdirSync } from "node:fs";
import { getPriority } from "node:os";
import { dirname, join } from "node:path";
import { SYSTEM_BOOT_CLOCK } from "../../src/pipeline/agent-boots.js";
import { removeTempDirs } from "../support/tmp.js";
import { launches, makeScenario, ofKind, q, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

describe("the baseline beside the implementer", () => {
  it("runs on the base in its own checkout while the implementer works, and is settled before the second stage", async () => {
    const s = await makeScenario();
    const out = dirname(s.launches);
    // On the base (no feature.txt): say so, then wait for the implementer (a minute at most, then exit 9).
    const test = [
      "test -f feature.txt && exit 0",
      `test -f ${q(join(out, "implementer-started"))} && echo "the implementer had started"`,
      `: > ${q(join(out, "baseline-started"))}`,
      "i=0",
      `while ! test -f ${q(join(out, "implementer-started"))}; do i=$((i + 1)); if [ "$i" -gt 600 ]; then exit 9; fi; sleep 0.1; done`,
      "exit 0",
    ].join("\n");
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "await-baseline", { test }));
    expect(outcome.status).toBe("completed");
    // Both waits were met: the baseline passed (not the guard's 9), the implementer went on (not its 7).
    expect(ofKind(journal, "baseline.finished")).toEqual([expect.objectContaining({ exitCode: 0, timedOut: false })]);
    // Its steps gave way to the implementer's start (agent-boots.ts): the suite began after the agent's launch.
    expect(ofKind(journal, "baseline.finished")[0]?.outputTail).toMatch(/^the implementer had started$/m);
    expect(launches(s)).toEqual(["implementer 1", "tester 1", "verifier 1", "documenter 1"]);
    // Journaled in the order that means: started with the task, finished before the second stage began.
    const order = journal.map((event) => (event.kind === "stage.started" ? `${event.stage}.started` : event.kind));
    expect(order.indexOf("baseline.started")).toBeLessThan(order.indexOf("provision.succeeded"));
    expect(order.indexOf("baseline.started")).toBeLessThan(order.indexOf("implementer.started"));
    expect(order.indexOf("baseline.finished")).toBeLessThan(order.indexOf("tester.started"));
    // Its checkout is gone with the story; only the task's own worktree folder was ever left to remove.
    const stories = join(s.home, "worktrees");
    const left = existsSync(stories) ? readdirSync(stories).flatMap((story) => readdirSync(join(stories, story))) : [];
    expect(left).toEqual([]);
  });

  it("gives way to the implementer's start only while it uses the CPU: an agent that waits lets the baseline run, however long a start may last", async () => {
    const s = await makeScenario();
    const out = dirname(s.launches);
    // The implementer waits for this marker (a minute at most); the start's time bound is an hour,
    // so only the agent's idle CPU can have let the baseline's steps go before its end.
    const test = ["test -f feature.txt && exit 0", `: > ${q(join(out, "baseline-started"))}`, "exit 0"].join("\n");
    const bootClock = { ...SYSTEM_BOOT_CLOCK, startMs: 3_600_000 };
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "await-baseline", { test }), { deps: { bootClock } });
    expect(outcome.status).toBe("completed");
    expect(ofKind(journal, "baseline.finished")).toEqual([expect.objectContaining({ exitCode: 0, timedOut: false })]);
    // The first implementer met the baseline's marker: one attempt. Held for the hour, the baseline
    // would have run only after that implementer gave up (exit 7), and a second attempt met it.
    expect(launches(s)).toEqual(["implementer 1", "tester 1", "verifier 1", "documenter 1"]);
  });

  it("blocks a base on which the test command cannot start before the second seat is spent", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete", { test: "kcd-scripts test" }));
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "environment" });
    // The implementer ran beside the baseline; nothing after it did.
    expect(launches(s)).toEqual(["implementer 1"]);
    expect(ofKind(journal, "stage.started").map((event) => event.stage)).toEqual(["implementer"]);
  });

  it("runs niced, yielding the CPU to the seat beside it; the suite where the change is judged does not", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete", { test: 'echo "niceness $(nice)"; test -f feature.txt' }));
    expect(outcome.status).toBe("completed");
    // Relative to the App's own niceness (a test run may itself be niced).
    const own = getPriority();
    expect(ofKind(journal, "baseline.finished")[0]?.outputTail).toMatch(new RegExp(`^niceness ${Math.min(19, own + 10)}$`, "m"));
    const judged = ofKind(journal, "clean_clone.finished")[0]?.result;
    expect(judged).toMatchObject({ ran: true, exitCode: 0 });
    expect(judged?.outputTail).toMatch(new RegExp(`^niceness ${own}$`, "m"));
  });
});
