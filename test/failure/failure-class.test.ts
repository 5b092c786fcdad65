import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { FAILURE_CLASSES, failureClassOf, isFailureClass } from "../../src/failure/index.js";
import { adviceFor, failureClassTable, withFailureClassTable } from "../../src/github/report/index.js";
import { GitError } from "../../src/workspace/index.js";
import { SchemaValidationError } from "../../src/schema/index.js";

const root = new URL("../../", import.meta.url);
const read = (path: string): string => readFileSync(fileURLToPath(new URL(path, root)), "utf8");

describe("the one failure vocabulary", () => {
  it("lists every class once", () => {
    expect(new Set(FAILURE_CLASSES).size).toBe(FAILURE_CLASSES.length);
  });

  it("is the journal schema's enum, member for member", () => {
    const schema = JSON.parse(read("schemas/execution-history.schema.json")) as { $defs: { failureClass: { enum: string[] } } };
    expect([...schema.$defs.failureClass.enum].sort()).toEqual([...FAILURE_CLASSES].sort());
  });

  it("has advice for every class", () => {
    for (const failureClass of FAILURE_CLASSES) expect(adviceFor(failureClass)).toMatch(/\S.{20,}/);
  });

  it("is the README's table of failure classes (run `npm run docs:failure-classes` when this fails)", () => {
    const readme = read("README.md");
    expect(readme).toContain(failureClassTable());
    expect(withFailureClassTable(readme)).toBe(readme);
    for (const failureClass of FAILURE_CLASSES) expect(readme).toContain(`| \`${failureClass}\` |`);
  });

  it("maps a typed error to its own class and anything else to internal-error", () => {
    expect(failureClassOf(new GitError("auth", ["fetch", "origin"], 128, "fatal: Authentication failed"))).toBe("git-failed");
    expect(failureClassOf(new SchemaValidationError("x.json", "receipt", [{ path: "/a", message: "is required" }]))).toBe("schema-invalid");
    expect(failureClassOf(new Error("boom"))).toBe("internal-error");
    expect(failureClassOf(Object.assign(new Error("odd"), { failureClass: "not-a-class" }))).toBe("internal-error");
    expect(failureClassOf("a string")).toBe("internal-error");
    expect(failureClassOf(undefined)).toBe("internal-error");
    expect(isFailureClass("retry-ceiling")).toBe(true);
    expect(isFailureClass("usage ")).toBe(false);
  });

  it("is where every error class and every literal class in the code comes from", () => {
    const sources = (readdirSync(fileURLToPath(new URL("src/", root)), { recursive: true }) as string[]).filter((path) => path.endsWith(".ts"));
    const classes = new Set<string>(FAILURE_CLASSES);
    let errorClasses = 0;
    for (const path of sources) {
      const text = read(`src/${path}`);
      // An error class's own class is checked by the compiler against the union (`satisfies`), never a bare string.
      for (const match of text.matchAll(/readonly failureClass\b([^;\n]*)/g)) {
        errorClasses += 1;
        expect([path, match[1]]).toEqual([path, expect.stringMatching(/^(: FailureClass|\s*=\s*"[a-z-]+" satisfies FailureClass)/)]);
      }
      for (const match of text.matchAll(/failureClass(?:\s*=|:)\s*"([^"]+)"/g)) expect([path, classes.has(match[1]!)]).toEqual([path, true]);
    }
    expect(errorClasses).toBeGreaterThanOrEqual(15);
  });
});
