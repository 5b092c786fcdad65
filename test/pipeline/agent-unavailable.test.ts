/**
 * Agents that cannot work are infrastructure, not failed attempts: the fake CLIs print the
 * real CLIs' messages; a fallback takes over, a rate-limited seat is parked and woken, and a
 * seat with no agent able to work blocks as `agent-unavailable` without a retry.
 */
import { dirname } from "node:path";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { fakeAgentBin, prependPath, type FakeBin } from "../agents/fake-cli.js";
import { AGENT_SCRIPT, launches, makeScenario, ofKind, runScenario, scriptedConfig, type Scenario } from "./helpers.js";
import { parseHarnessConfig } from "../../src/pipeline/index.js";

afterAll(removeTempDirs);

let restore: () => void = () => undefined;
afterEach(() => restore());

/** The scenario's sandbox, which may also run the fake CLIs and write their call log. */
function sandboxWith(s: Scenario, bin: FakeBin): Sandbox {
  return new Sandbox(
    sandboxSettingsFromEnv({ ...process.env, HARNESS_SANDBOX_READ: dirname(AGENT_SCRIPT), HARNESS_SANDBOX_WRITE: `${dirname(s.launches)}:${bin.dir}` }),
  );
}

const presetConfig = (yamlAgent: string) =>
  parseHarnessConfig(`agent:\n${yamlAgent}\ntest:\n  command: test -f feature.txt\nprovision:\n  command: "true"\n`, "harness.yml");

describe("agents that cannot work", () => {
  it("fall back to the next binding when Claude Code refuses to run as root", async () => {
    const s = await makeScenario();
    const bin = fakeAgentBin({ claude: ["root"], codex: [`work ${AGENT_SCRIPT} ${s.launches}`] });
    restore = prependPath(bin.dir);
    const { outcome, journal } = await runScenario(s, presetConfig("  preset: claude-code\n  fallback: [codex]"), { sandbox: sandboxWith(s, bin) });
    expect(outcome.status).toBe("completed");
    expect(bin.calls()).toEqual(["claude root", "codex work", "claude root", "codex work", "claude root", "codex work", "claude root", "codex work"]);
    const unavailable = ofKind(journal, "seat.unavailable");
    expect(unavailable).toHaveLength(4);
    expect(unavailable[0]).toMatchObject({
      stage: "implementer",
      reason: "root-refused",
      message: expect.stringContaining("cannot be used with root/sudo privileges"),
    });
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
  });

  it("block as agent-unavailable, outside the attempt ladder, when no binding can work", async () => {
    const s = await makeScenario();
    const bin = fakeAgentBin({ claude: ["no-login"], codex: ["codex-no-network"] });
    restore = prependPath(bin.dir);
    const { outcome, journal } = await runScenario(s, presetConfig("  preset: claude-code\n  fallback: [codex]"), { sandbox: sandboxWith(s, bin) });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "agent-unavailable" });
    expect(outcome.detail).toContain("claude: auth-missing; codex: provider-unreachable");
    expect(bin.calls()).toEqual(["claude no-login", "codex codex-no-network"]);
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
    expect(ofKind(journal, "attempt.archived")).toEqual([]);
    expect(launches(s)).toEqual([]);
  });

  it("park a rate-limited seat until the reset Claude Code names, then wake it", async () => {
    const s = await makeScenario();
    const bin = fakeAgentBin({ claude: ["limit", `work ${AGENT_SCRIPT} ${s.launches}`] });
    restore = prependPath(bin.dir);
    const clock = { now: new Date("2026-12-01T14:10:00Z") };
    const slept: string[] = [];
    const { outcome, journal } = await runScenario(s, presetConfig("  preset: claude-code"), {
      sandbox: sandboxWith(s, bin),
      clock: () => clock.now,
      deps: {
        sleepUntil: async (at) => {
          slept.push(at.toISOString());
          clock.now = at;
        },
      },
    });
    expect(outcome.status).toBe("completed");
    expect(slept).toEqual(["2026-12-01T15:00:00.000Z"]);
    expect(ofKind(journal, "seat.parked")).toEqual([expect.objectContaining({ stage: "implementer", attempt: 1, until: "2026-12-01T15:00:00.000Z" })]);
    expect(ofKind(journal, "seat.unavailable")[0]).toMatchObject({ reason: "rate-limited", resetAt: "2026-12-01T15:00:00.000Z" });
    expect(bin.calls().slice(0, 2)).toEqual(["claude limit", "claude work"]);
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
  });
});

describe("a missing verdict", () => {
  it("re-runs the verifier seat once, not the implementer", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "verdict-on-rerun"));
    expect(outcome.status).toBe("completed");
    expect(launches(s)).toEqual(["implementer 1", "tester 1", "verifier 1", "verifier 1", "documenter 1"]);
    expect(ofKind(journal, "verdict.recorded")[0]).toMatchObject({ verdict: "pass", findings: ["checked on the re-run"] });
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
  });
});
