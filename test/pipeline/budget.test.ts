/**
 * Budgets fail closed: the repository's `budget` within the operator's ceilings, summed over the
 * story's seats from their transcripts; spent, the story blocks as `budget-exhausted` outside the
 * attempt ladder, its work so far committed. The fake `claude` reports each launch's usage the way
 * Claude Code's stream-json result event does.
 */
import { dirname } from "node:path";
import { parseHarnessConfig } from "../../src/pipeline/index.js";
import { effectiveBudget, operatorBudget } from "../../src/pipeline/budget.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { fakeAgentBin, prependPath, type FakeBin } from "../agents/fake-cli.js";
import { removeTempDirs } from "../support/tmp.js";
import { AGENT_SCRIPT, makeScenario, ofKind, runScenario, type Scenario } from "./helpers.js";

afterAll(removeTempDirs);
let restore: () => void = () => undefined;
afterEach(() => restore());

function sandboxWith(s: Scenario, bin: FakeBin): Sandbox {
  return new Sandbox(
    sandboxSettingsFromEnv({ ...process.env, HARNESS_SANDBOX_READ: dirname(AGENT_SCRIPT), HARNESS_SANDBOX_WRITE: `${dirname(s.launches)}:${bin.dir}` }),
  );
}

const config = (budget: string) =>
  parseHarnessConfig(`agent:\n  preset: claude-code\n${budget}test:\n  command: test -f feature.txt\nprovision:\n  command: "true"\n`, "harness.yml");

describe("budgets", () => {
  it("refuse a budget of 0 or a negative one, naming the key", () => {
    expect(() => config("budget:\n  max_tokens: 0\n")).toThrow(/max_tokens/);
    expect(() => config("budget:\n  max_turns_per_seat: -1\n")).toThrow(/max_turns_per_seat/);
    expect(() => config("budget:\n  max_agent_minutes: 0\n")).toThrow(/max_agent_minutes/);
    expect(config("budget:\n  max_tokens: 5\n  max_agent_minutes: 0.5\n").budget).toEqual({ maxTokens: 5, maxAgentMs: 30_000 });
  });

  it("take the lower of the repository's and the operator's; an operator ceiling that is not positive is an error naming it", () => {
    const operator = operatorBudget({ HARNESS_MAX_TOKENS: "1000", HARNESS_MAX_TURNS_PER_SEAT: "30", HARNESS_MAX_AGENT_MINUTES: "2" });
    expect(effectiveBudget({ maxTokens: 5000, maxTurnsPerSeat: 10 }, operator)).toEqual({ maxTokens: 1000, maxTurnsPerSeat: 10, maxAgentMs: 120_000 });
    expect(() => operatorBudget({ HARNESS_MAX_TOKENS: "0" })).toThrow(/HARNESS_MAX_TOKENS/);
    expect(() => operatorBudget({ HARNESS_MAX_TURNS_PER_SEAT: "lots" })).toThrow(/HARNESS_MAX_TURNS_PER_SEAT/);
  });

  it("block the story as budget-exhausted when its seats spent the tokens, without a retry, the work committed; a repository cannot raise the operator's ceiling", async () => {
    const s = await makeScenario();
    const work = `stream 2 100 20 ${AGENT_SCRIPT} ${s.launches}`;
    const bin = fakeAgentBin({ claude: [work, work, work, work, work, work] });
    const before = process.env.HARNESS_MAX_TOKENS;
    process.env.HARNESS_MAX_TOKENS = "250";
    const undoPath = prependPath(bin.dir);
    restore = () => {
      undoPath();
      if (before === undefined) delete process.env.HARNESS_MAX_TOKENS;
      else process.env.HARNESS_MAX_TOKENS = before;
    };
    const { outcome, journal } = await runScenario(s, config("budget:\n  max_tokens: 100000\n  max_turns_per_seat: 5\n"), { sandbox: sandboxWith(s, bin) });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "budget-exhausted" });
    expect(outcome.detail).toMatch(/360 tokens of max_tokens 250/);
    expect(ofKind(journal, "seat.usage").map((event) => [event.stage, event.turns, event.inputTokens, event.outputTokens])).toEqual([
      ["implementer", 2, 100, 20],
      ["tester", 2, 100, 20],
      ["verifier", 2, 100, 20],
    ]);
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
    expect(outcome.commit).toMatch(/^[0-9a-f]{40}$/);
    // The budget's turns reached the CLI.
    expect(bin.calls()).toHaveLength(3);
  });
});
