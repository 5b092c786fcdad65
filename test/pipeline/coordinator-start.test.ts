/**
 * What runStory (src/pipeline/coordinator.ts) decides before a story's first worktree, each on
 * the smallest real story: the network `run.started` records for the operator's sandbox, a
 * configuration refused for what the base commit holds, and a budget ledger that cannot be read
 * (blocking only a story whose budget counts tokens or agent minutes).
 */
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { type HarnessConfig, type RunStoryArgs, type Workflow } from "../../src/pipeline/index.js";
import { budgetSpentPath, readBudgetSpent, writeBudgetSpent } from "../../src/pipeline/budget-ledger.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { git } from "../../src/workspace/index.js";
import { commitAll, removeTempDirs } from "../support/tmp.js";
import { kinds, makeScenario, ofKind, type Scenario } from "./helpers.js";
import { minimalConfig, runMinimal, workflow } from "./minimal-story.js";

afterAll(removeTempDirs);

const gateOnly = (s: Scenario): Workflow => workflow(s, "gate-only", [{ id: "check", kind: "gate" }], "check", 1);

/** Agent and suite that are one shell line; `provision` is left out when null (the repository rules then apply). */
const config = (extra: string, provision: string | null = "true"): HarnessConfig => minimalConfig({ extra, provision });

/** A story of one gate, within no operator ceilings but the repository's budget. */
const run = (s: Scenario, args: Partial<RunStoryArgs> & { config: HarnessConfig }): ReturnType<typeof runMinimal> =>
  runMinimal(s, { workflow: gateOnly(s), budgetCeilings: {}, ...args });

/** A sandboxed story's sandbox with the operator's network settings `net` (the others cleared). */
const sandboxWith = (net: Record<string, string>): Sandbox =>
  new Sandbox(
    sandboxSettingsFromEnv({ ...process.env, HARNESS_SANDBOX: "on", HARNESS_SANDBOX_NET: "", HARNESS_NET_ALLOW: "", HARNESS_EGRESS_ALLOW: "", ...net }),
  );

/** A configuration preflight refuses: the story ends right after `run.started`. */
const REFUSED = "seats:\n  verifer:\n    timeout_minutes: 5";

describe("run.started's network", () => {
  it.each([
    ["own", {}],
    ["egress", { HARNESS_EGRESS_ALLOW: "registry.example.org" }],
    ["host", { HARNESS_SANDBOX_NET: "host" }],
  ])("is %s for networked steps under the operator's settings", async (network, net) => {
    const s = await makeScenario();
    const { outcome, journal } = await run(s, { config: config(REFUSED), sandbox: sandboxWith(net) });
    expect(outcome.failureClass).toBe("config-invalid");
    const [started] = ofKind(journal, "run.started");
    expect(started?.network).toBe(network);
    expect(started).not.toHaveProperty("unsandboxed");
  });
});

describe("preflight against the base commit", () => {
  it("refuses a configuration without provisioning when the base's package.json has no lockfile, though a later commit has one", async () => {
    const s = await makeScenario({ "package.json": '{ "name": "demo" }\n' });
    const base = await git(["rev-parse", "HEAD"], { cwd: s.repo });
    writeFileSync(join(s.repo, "package-lock.json"), "{}\n");
    await commitAll(s.repo, "lockfile");
    const { outcome, journal } = await run(s, { config: config("", null), baseRef: base });
    expect(outcome).toMatchObject({
      status: "blocked",
      failureClass: "config-invalid",
      detail: expect.stringMatching(/^configuration: \$\.provision\.command is required: package\.json has no lockfile/),
    });
    expect(kinds(journal)).toEqual(["run.started", "story.blocked"]);
    expect(ofKind(journal, "story.blocked")[0]).toMatchObject({ failureClass: "config-invalid", detail: outcome.detail });
  });
});

describe("a budget ledger that cannot be read", () => {
  /** The story's ledger, made unreadable as JSON before the run; returns its path. */
  function spoilLedger(s: Scenario): string {
    const path = budgetSpentPath(s.home, "demo");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "{ not json");
    return path;
  }
  const detailFor = (path: string): string => `the story's agent budget cannot be counted: ${path} is not JSON; remove the file to start the count again`;

  it("blocks a story held to max_tokens as budget-exhausted, journaled with its task, and leaves the ledger as it was", async () => {
    const s = await makeScenario();
    const ledger = spoilLedger(s);
    const { outcome, journal } = await run(s, { config: config("budget:\n  max_tokens: 1000") });
    const taskId = ofKind(journal, "run.started")[0]?.taskId;
    expect(taskId).toMatch(/^task-/);
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "budget-exhausted", detail: detailFor(ledger) });
    expect(ofKind(journal, "story.blocked")).toEqual([
      { kind: "story.blocked", taskId, failureClass: "budget-exhausted", detail: detailFor(ledger), at: expect.any(String) },
    ]);
    expect(kinds(journal)).toEqual(["run.started", "story.blocked"]);
    expect(readFileSync(ledger, "utf8")).toBe("{ not json");
  });

  it("blocks a planned story held to max_agent_minutes as budget-exhausted, journaled without a task", async () => {
    const s = await makeScenario();
    const ledger = spoilLedger(s);
    const plan = { tasks: [{ id: "a", title: "Part a", files: ["a.txt"] }] };
    const story = { id: "demo", title: "Plan", body: `One part.\n\n\`\`\`harness-plan\n${JSON.stringify(plan)}\n\`\`\`\n` };
    const { outcome, journal } = await run(s, { config: config("budget:\n  max_agent_minutes: 5"), story });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "budget-exhausted", detail: detailFor(ledger) });
    expect(ofKind(journal, "story.blocked")).toEqual([
      { kind: "story.blocked", failureClass: "budget-exhausted", detail: detailFor(ledger), at: expect.any(String) },
    ]);
    expect(kinds(journal)).toEqual(["run.started", "story.blocked"]);
  });

  it("is not a readable one: a story held to max_tokens runs on, counting from what its earlier runs spent", async () => {
    const s = await makeScenario();
    writeBudgetSpent(s.home, { storyId: "demo", runs: 2, launches: 4, tokens: 700, agentMs: 9000 }, new Date());
    const { outcome } = await run(s, { config: config("budget:\n  max_tokens: 1000") });
    expect(outcome.status).toBe("completed");
    expect(readBudgetSpent(s.home, "demo").spent).toMatchObject({ runs: 3, launches: 4, tokens: 700, agentMs: 9000 });
  });

  it("does not block a story held only to max_turns_per_seat: the count starts again in a ledger of its own", async () => {
    const s = await makeScenario();
    const ledger = spoilLedger(s);
    const { outcome, journal } = await run(s, { config: config("budget:\n  max_turns_per_seat: 3") });
    expect(outcome.status).toBe("completed");
    expect(ofKind(journal, "story.blocked")).toEqual([]);
    expect(readBudgetSpent(s.home, "demo")).toEqual({ spent: expect.objectContaining({ storyId: "demo", runs: 1, launches: 0, tokens: 0 }) });
    expect(readFileSync(ledger, "utf8")).not.toContain("not json");
  });
});
