/**
 * A revision round's template (src/pipeline/coordinator.ts): `prompts/reviser.md`, checked for
 * unknown placeholders as a workflow's templates are, is what the implementer of a run with a
 * revision gets; a run without one keeps the workflow's own template.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadWorkflow, parseHarnessConfig, REVISER_PROMPT_PATH, runStory, type RunStoryArgs, type StoryOutcome } from "../../src/pipeline/index.js";
import { checkedTemplate } from "../../src/pipeline/coordinator.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { makeScenario, recordingReporter } from "./helpers.js";
import { sandboxOf } from "./task-run.js";

afterAll(removeTempDirs);

describe("checkedTemplate", () => {
  it("refuses a template with unknown placeholders, naming the file and each of them", () => {
    const path = join(makeTempDir("harness-template-"), "reviser.md");
    writeFileSync(path, "# Reviser {{story_id}}\n\n{{review_feedback}} {{reviewer_mood}} {{story_id}} {{fix_list}}\n");
    expect(() => checkedTemplate(path)).toThrow(new Error(`${path} uses unknown placeholders: reviewer_mood, fix_list`));
  });

  it("gives the shipped prompts/reviser.md as it is", () => {
    expect(checkedTemplate(REVISER_PROMPT_PATH)).toBe(readFileSync(REVISER_PROMPT_PATH, "utf8"));
  });
});

describe("a revision round's implementer", () => {
  /** A one-seat story whose agent changes nothing; returns the outcome and the implementer's first prompt. */
  async function implementerPrompt(extra: Partial<RunStoryArgs>): Promise<{ outcome: StoryOutcome; prompt: string }> {
    const s = await makeScenario();
    const file = join(s.dir, "seat-only.json");
    const stages = [{ id: "implementer", seat: "implementer", prompt: "prompts/implementer.md" }];
    writeFileSync(file, JSON.stringify({ name: "seat-only", max_attempts: 1, stages, on_failure: { retry_stage: "implementer" } }));
    const outcome = await runStory({
      repoDir: s.repo,
      story: { id: "demo", title: "Greet the user", body: "Write feature.txt saying hello." },
      branch: "harness/story-demo",
      baseRef: "HEAD",
      config: parseHarnessConfig('agent:\n  command: "true"\ntest:\n  command: "true"\nprovision:\n  command: "true"\n', "harness.yml"),
      workflow: loadWorkflow(file),
      harnessHome: s.home,
      reporter: recordingReporter(),
      agentEnvAllow: [],
      sandbox: sandboxOf(true),
      budgetCeilings: {},
      ...extra,
    });
    return { outcome, prompt: readFileSync(join(outcome.runDir, "attempts", "1", "implementer", "prompt.md"), "utf8") };
  }

  it("works from prompts/reviser.md with the round's feedback", async () => {
    const { prompt } = await implementerPrompt({ revision: { reviewFeedback: "- Rename greet() to welcome()." } });
    expect(prompt).toMatch(/^# Reviser — story demo, stage implementer, attempt 1 of 1\n/);
    expect(prompt).toContain("## Review feedback\n\n- Rename greet() to welcome().\n");
    expect(prompt).toContain("## CI failure\n\n(none)\n");
  });

  it("of a run without a revision keeps the workflow's template", async () => {
    const { prompt } = await implementerPrompt({});
    expect(prompt).toMatch(/^# Implementer — story demo, attempt 1 of 1\n/);
    expect(prompt).not.toContain("## Review feedback");
  });
});
