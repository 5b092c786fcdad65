/**
 * Budgets fail closed: the repository's `budget` within the operator's ceilings, summed over the
 * story's seats from their transcripts; spent, the story blocks as `budget-exhausted` outside the
 * attempt ladder, its work so far committed. The fake `claude` reports each launch's usage the way
 * Claude Code's stream-json result event does.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { budgetSpentPath } from "../../src/pipeline/budget-ledger.js";
import { emptySnapshot, reduceSnapshot, taskSnapshot } from "../../src/pipeline/snapshot.js";
import { usageTable } from "../../src/github/report/render/usage.js";
import { schemas } from "../../src/schema/index.js";
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
    // Each launch is dated from when the harness began launching the agent: within its stage, before its usage was journaled.
    for (const usage of ofKind(journal, "seat.usage")) {
      const started = ofKind(journal, "stage.started").find((event) => event.stage === usage.stage);
      const launched = Date.parse(usage.launchedAt ?? "");
      expect(launched).toBeGreaterThanOrEqual(Date.parse(started?.at ?? ""));
      expect(launched).toBeLessThanOrEqual(Date.parse(usage.at));
    }
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
    expect(outcome.commit).toMatch(/^[0-9a-f]{40}$/);
    // The budget's turns reached the CLI.
    expect(bin.calls()).toHaveLength(3);
  });

  it("count every run of a story: what the first run spent is kept (schema-checked) and a second run of the same story spends the rest", async () => {
    const s = await makeScenario();
    const work = `stream 2 100 20 ${AGENT_SCRIPT} ${s.launches}`;
    const bin = fakeAgentBin({ claude: [work, work, work, work, work, work] });
    restore = prependPath(bin.dir);
    const budget = config("budget:\n  max_tokens: 500\n");
    // The first run's four seats spend 480 of 500 tokens: it completes.
    const first = await runScenario(s, budget, { sandbox: sandboxWith(s, bin) });
    expect(first.outcome.status).toBe("completed");
    const kept: unknown = JSON.parse(readFileSync(budgetSpentPath(s.home, "demo"), "utf8"));
    expect(schemas().issues("budget-spent", kept)).toEqual([]);
    expect(kept).toMatchObject({ storyId: "demo", runs: 1, launches: 4, tokens: 480 });
    // A retry of the same story does not start the count again: its first seat spends the rest.
    const second = await runScenario(s, budget, { sandbox: sandboxWith(s, bin), readmission: true });
    expect(second.outcome).toMatchObject({ status: "blocked", failureClass: "budget-exhausted" });
    expect(second.outcome.detail).toContain("the story's agents spent 600 tokens across its 2 runs of max_tokens 500");
    expect(ofKind(second.journal, "seat.usage").map((event) => [event.stage, event.story])).toEqual([
      ["implementer", { runs: 2, tokens: 600, agentMs: expect.any(Number) as number }],
    ]);
    // The check run's usage table says what the story spent across its runs, beside this run's seats.
    const table = usageTable(taskSnapshot(second.journal.reduce(reduceSnapshot, emptySnapshot())));
    expect(table.at(-1)).toMatch(/^Across the story's 2 runs its agents spent 600 tokens and [0-9.]+ (ms|s|min) of agent time\.$/);
    expect(JSON.parse(readFileSync(budgetSpentPath(s.home, "demo"), "utf8"))).toMatchObject({ runs: 2, launches: 5, tokens: 600 });
    expect(bin.calls()).toHaveLength(5);
  });

  it("fail closed on a record of earlier spending that cannot be read: the story blocks naming the file, no agent launched", async () => {
    const s = await makeScenario();
    const bin = fakeAgentBin({ claude: [`stream 2 100 20 ${AGENT_SCRIPT} ${s.launches}`] });
    restore = prependPath(bin.dir);
    const file = budgetSpentPath(s.home, "demo");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ version: 1, storyId: "demo", runs: 1, launches: 1, tokens: -5, agentMs: 0, at: "2026-12-04T21:00:00.000Z" }));
    const { outcome } = await runScenario(s, config("budget:\n  max_tokens: 500\n"), { sandbox: sandboxWith(s, bin) });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "budget-exhausted" });
    expect(outcome.detail).toContain(`the story's agent budget cannot be counted: ${file} is invalid: $.tokens`);
    expect(bin.calls()).toEqual([]);
  });
});
