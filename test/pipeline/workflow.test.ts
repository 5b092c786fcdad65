import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_WORKFLOW_PATH, loadWorkflow, WorkflowError } from "../../src/pipeline/index.js";
import { SchemaValidationError } from "../../src/schema/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { launches, makeScenario, ofKind, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

const defaultJson = (): Record<string, unknown> & { stages: Record<string, unknown>[] } =>
  JSON.parse(readFileSync(DEFAULT_WORKFLOW_PATH, "utf8")) as Record<string, unknown> & { stages: Record<string, unknown>[] };

/** Writes a workflow into a temp dir (prompts resolve from the harness's own folder). */
function writeWorkflow(data: unknown, name = "workflow.json"): string {
  const path = join(makeTempDir("harness-workflow-"), name);
  writeFileSync(path, JSON.stringify(data));
  return path;
}

describe("loadWorkflow", () => {
  it("loads the default workflow: four stages, the verifier gated and declaring the clean-clone check", () => {
    const workflow = loadWorkflow();
    expect(workflow.stages.map((stage) => stage.id)).toEqual(["implementer", "tester", "verifier", "documenter", "integrity"]);
    expect(workflow.retryStage).toBe("implementer");
    const verifier = workflow.stages[2];
    expect(verifier).toMatchObject({ gate: "suite", verdict: "verdict.json", cleanClone: "clean-clone-result.json" });
    expect(verifier?.artifacts).toEqual([{ name: "verdict.json", schema: "verdict" }]);
    expect(verifier?.template).toContain("{{artifact_dir}}/verdict.json");
  });

  it("names the file and the JSON path of an offending value", () => {
    const data = defaultJson();
    (data.stages[2] as Record<string, unknown>).seat = 42;
    data.extra_key = true;
    const path = writeWorkflow(data);
    expect(() => loadWorkflow(path)).toThrow(SchemaValidationError);
    expect(() => loadWorkflow(path)).toThrow(new RegExp(`${path}: .*\\$\\.stages\\[2\\]\\.seat`));
    expect(() => loadWorkflow(path)).toThrow(/\$\.extra_key is not an allowed key/);
  });

  it("refuses a retry stage, verdict or artifact schema that refers to nothing", () => {
    const retry = defaultJson();
    retry.on_failure = { retry_stage: "planner" };
    expect(() => loadWorkflow(writeWorkflow(retry))).toThrow(/\$\.on_failure\.retry_stage names no stage/);
    const verdict = defaultJson();
    (verdict.stages[2] as Record<string, unknown>).verdict = "other.json";
    expect(() => loadWorkflow(writeWorkflow(verdict))).toThrow(/\$\.stages\[2\]\.verdict/);
    const schema = defaultJson();
    (schema.stages[0] as Record<string, unknown>).artifacts = [{ name: "plan.json", schema: "no-such-schema" }];
    expect(() => loadWorkflow(writeWorkflow(schema))).toThrow(/\$\.stages\[0\]\.artifacts\[0\]\.schema/);
    const missing = defaultJson();
    (missing.stages[1] as Record<string, unknown>).prompt = "prompts/nope.md";
    expect(() => loadWorkflow(writeWorkflow(missing))).toThrow(WorkflowError);
  });

  it("refuses a template with an unknown placeholder when the workflow loads", () => {
    const dir = makeTempDir("harness-workflow-");
    writeFileSync(join(dir, "mine.md"), "Do {{story_title}} with {{story_tittle}}\n");
    const data = defaultJson();
    (data.stages[0] as Record<string, unknown>).prompt = "mine.md";
    const path = join(dir, "workflow.json");
    writeFileSync(path, JSON.stringify(data));
    expect(() => loadWorkflow(path)).toThrow(/\$\.stages\[0\]\.prompt template .*mine\.md uses unknown placeholder\(s\) \{\{story_tittle\}\}/);
  });

  it("gives every stage a kind from the registry: 'seat' when it names none, an unknown kind refused naming the stage and the field", () => {
    expect(loadWorkflow().stages.map((stage) => stage.kind)).toEqual(["seat", "seat", "seat", "seat", "integrity"]);
    const unnamed = defaultJson();
    delete (unnamed.stages[1] as Record<string, unknown>).kind;
    expect(loadWorkflow(writeWorkflow(unnamed)).stages[1]?.kind).toBe("seat");

    const unknown = defaultJson();
    (unknown.stages[1] as Record<string, unknown>).kind = "reviewer";
    const path = writeWorkflow(unknown);
    expect(() => loadWorkflow(path)).toThrow(WorkflowError);
    expect(() => loadWorkflow(path)).toThrow(
      `${path}: $.stages[1].kind of stage 'tester' names no stage kind ('reviewer'); the kinds are clean-clone, gate, integrity, planner, review, seat`,
    );
    const malformed = defaultJson();
    (malformed.stages[0] as Record<string, unknown>).kind = "Seat!";
    expect(() => loadWorkflow(writeWorkflow(malformed))).toThrow(/\$\.stages\[0\]\.kind/);
  });

  it("takes a planner only as the first stage, without a seat stage's options, and requires its plan.json", () => {
    const planner = { id: "planner", kind: "planner", seat: "planner", prompt: "prompts/planner.md" };
    const first = defaultJson();
    first.stages.unshift(planner);
    const loaded = loadWorkflow(writeWorkflow(first));
    expect(loaded.stages[0]).toMatchObject({ id: "planner", kind: "planner", artifacts: [{ name: "plan.json", schema: "plan" }] });
    expect(loaded.stages[0]?.template).toContain("{{artifact_dir}}/plan.json");

    const later = defaultJson();
    later.stages.splice(1, 0, planner);
    expect(() => loadWorkflow(writeWorkflow(later))).toThrow(
      /\$\.stages\[1\]\.kind makes stage 'planner' a planner, but only a workflow's first stage may plan the story/,
    );
    const gated = defaultJson();
    gated.stages.unshift({ ...planner, gate: "suite" });
    expect(() => loadWorkflow(writeWorkflow(gated))).toThrow(/\$\.stages\[0\]\.gate is not an option of a planner stage/);
    const alone = { ...defaultJson(), stages: [planner], on_failure: { retry_stage: "planner" } };
    expect(() => loadWorkflow(writeWorkflow(alone))).toThrow(/\$\.stages has no stage that runs per task/);
  });

  it("keeps the clean-clone artifact name out of the pipeline's code", () => {
    const dir = fileURLToPath(new URL("../../src/pipeline/", import.meta.url));
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) expect(readFileSync(join(file.parentPath, file.name), "utf8")).not.toContain("clean-clone-result.json");
  });
});

describe("a stage without the clean_clone declaration", () => {
  it("runs no clean-clone check", async () => {
    const data = defaultJson();
    delete (data.stages[2] as Record<string, unknown>).clean_clone;
    const workflow = loadWorkflow(writeWorkflow(data));
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete"), { workflow });
    expect(outcome.status).toBe("completed");
    expect(ofKind(journal, "clean_clone.finished")).toEqual([]);
    expect(existsSync(join(outcome.runDir, "attempts", "1", "clean-clone-result.json"))).toBe(false);
    expect(launches(s)).toHaveLength(4);
  });

  it("writes the result under whatever name the stage declares", async () => {
    const data = defaultJson();
    (data.stages[2] as Record<string, unknown>).clean_clone = "fresh-clone.json";
    const workflow = loadWorkflow(writeWorkflow(data));
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete"), { workflow });
    expect(ofKind(journal, "clean_clone.finished")[0]).toMatchObject({ artifact: "fresh-clone.json" });
    expect(JSON.parse(readFileSync(join(outcome.runDir, "attempts", "1", "fresh-clone.json"), "utf8"))).toMatchObject({ ran: true, exitCode: 0 });
  });
});
