import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SCHEMAS_DIR, SchemaRegistry, schemas } from "../src/schema/index.js";

const FIXTURES = join(import.meta.dirname, "fixtures", "schemas");
const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")) as Record<string, unknown>;

describe("schemas/", () => {
  it("holds exactly the schemas of the records people and the harness write", () => {
    expect(schemas().names().sort()).toEqual([
      "agent-starts",
      "attempt-archive",
      "baseline-cache",
      "budget-spent",
      "clean-clone-result",
      "execution-history",
      "harness-config",
      "outbox-entry",
      "plan",
      "provision-receipt",
      "queue-job",
      "queue-lock",
      "queue-quarantined-job",
      "queue-story-job",
      "queue-worker-report",
      "sandbox-probe",
      "status-webhook-door",
      "verdict",
      "workflow",
    ]);
    // Every schema has a fixture here, so a new schema cannot arrive untested.
    const files = readdirSync(SCHEMAS_DIR)
      .map((file) => file.replace(/\.schema\.json$/, ""))
      .sort();
    expect(
      readdirSync(FIXTURES)
        .map((file) => file.replace(/\.json$/, ""))
        .sort(),
    ).toEqual(files.filter((name) => name !== "workflow"));
  });

  it("compiles every schema (each is compiled lazily on first use, so a broken one must fail here)", () => {
    const registry = new SchemaRegistry();
    expect(registry.precompile().names().length).toBeGreaterThanOrEqual(9);
    expect(() => registry.precompile("no-such-schema")).toThrow("unknown schema 'no-such-schema'");
  });

  it("accepts the shipped workflow and every fixture", () => {
    const workflow = JSON.parse(readFileSync(join(import.meta.dirname, "..", "workflows", "story-workflow.json"), "utf8")) as unknown;
    expect(schemas().issues("workflow", workflow)).toEqual([]);
    for (const name of schemas()
      .names()
      .filter((candidate) => candidate !== "workflow")) {
      expect([name, schemas().issues(name, fixture(name))]).toEqual([name, []]);
    }
  });

  it("refuses an extra key in every record, naming its JSON path", () => {
    for (const name of schemas()
      .names()
      .filter((candidate) => candidate !== "workflow")) {
      const issues = schemas().issues(name, { ...fixture(name), surplus: true });
      expect([name, issues.map((issue) => issue.path)]).toEqual([name, expect.arrayContaining(["$.surplus"])]);
    }
  });

  it("parses a stored record only when it is whole and valid", () => {
    const text = JSON.stringify(fixture("queue-lock"));
    expect(schemas().parseValid("queue-lock", text)).toEqual(fixture("queue-lock"));
    expect(schemas().parseValid("queue-lock", text.slice(0, -3))).toBeUndefined();
    expect(schemas().parseValid("queue-lock", "")).toBeUndefined();
    expect(schemas().parseValid("queue-lock", JSON.stringify({ ...fixture("queue-lock"), pid: "1" }))).toBeUndefined();
  });

  it("expresses optional fields by absence: null is refused", () => {
    const issues = schemas().issues("clean-clone-result", { ran: false, command: "npm test", durationMs: 1, reason: "clone failed", exitCode: null });
    expect(issues.map((issue) => issue.path)).toContain("$.exitCode");
  });
});
