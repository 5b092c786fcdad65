/**
 * What a path is to the integrity gate: a test file of some language, a test runner's
 * configuration, a CI workflow or plain code. Decided from the path alone (segment and name
 * checks, no regular expression over the path), except for Rust, whose unit tests live beside
 * the code and are recognised by their `#[test]` attributes.
 */

/** The languages whose test cases, skips and assertions the gate counts. */
export type Language = "js" | "python" | "go" | "rust" | "java" | "ruby";

const EXTENSIONS: ReadonlyMap<string, Language> = new Map([
  ...["js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"].map((ext) => [ext, "js"] as const),
  ["py", "python"],
  ["go", "go"],
  ["rs", "rust"],
  ["java", "java"],
  ["kt", "java"],
  ["kts", "java"],
  ["rb", "ruby"],
]);

/** Folder names under which every file of a language counts as test code. */
const TEST_FOLDERS = new Set(["test", "tests", "__tests__", "spec", "specs", "testing"]);

/** The file name of `path` (after the last `/`). */
export function fileName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The language of a source file by its extension, or undefined for anything else. */
export function languageOf(path: string): Language | undefined {
  const name = fileName(path);
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return undefined;
  return EXTENSIONS.get(name.slice(dot + 1).toLowerCase());
}

function inTestFolder(path: string): boolean {
  const segments = path.split("/");
  segments.pop();
  return segments.some((segment) => TEST_FOLDERS.has(segment));
}

/**
 * Whether `path` is a test file by its place and name: `*.test.*`/`*.spec.*` in JS and TS,
 * `test_*.py`/`*_test.py`, `*_test.go`, `*Test.java`/`src/test/**`, `*_spec.rb`/`*_test.rb`,
 * or a source file under a `test`/`tests`/`__tests__`/`spec` folder. A Rust file counts when
 * its `content` (either side of the change) carries `#[test]`.
 */
export function isTestPath(path: string, content?: string): boolean {
  const language = languageOf(path);
  if (language === undefined) return false;
  const name = fileName(path);
  const stem = name.slice(0, name.lastIndexOf("."));
  switch (language) {
    case "js":
      return stem.endsWith(".test") || stem.endsWith(".spec") || inTestFolder(path);
    case "python":
      return stem.startsWith("test_") || stem.endsWith("_test") || stem === "conftest" || inTestFolder(path);
    case "go":
      return stem.endsWith("_test");
    case "rust":
      return inTestFolder(path) || (content !== undefined && content.includes("#[test]"));
    case "java":
      return stem.endsWith("Test") || stem.endsWith("Tests") || path.includes("src/test/") || inTestFolder(path);
    case "ruby":
      return stem.endsWith("_spec") || stem.endsWith("_test") || stem.startsWith("test_") || inTestFolder(path);
  }
}

/** True for a CI workflow of GitHub Actions. */
export function isWorkflowPath(path: string): boolean {
  return path.startsWith(".github/workflows/");
}

/** Names whose whole file configures a test runner or its coverage (any change is a finding). */
const RUNNER_CONFIG_PREFIXES = [
  "jest.config.",
  "vitest.config.",
  "vitest.workspace.",
  ".mocharc",
  "karma.conf.",
  "ava.config.",
  ".nycrc",
  ".c8rc",
  "playwright.config.",
  "cypress.config.",
  "pytest.ini",
  ".coveragerc",
  "codecov.yml",
  ".codecov.yml",
];

/** Files that configure the runner in one section among others: only that section is compared. */
const SECTIONED_CONFIGS: ReadonlyMap<string, readonly string[]> = new Map([
  ["pyproject.toml", ["[tool.pytest", "[tool.coverage"]],
  ["setup.cfg", ["[tool:pytest", "[coverage:"]],
  ["tox.ini", ["[pytest", "[coverage:"]],
]);

/** How a path configures the tests: the whole file, some sections of it, `package.json`, or not at all. */
export type ConfigRole = { kind: "whole" } | { kind: "sections"; headers: readonly string[] } | { kind: "package-json" } | undefined;

/** The role of `path` in configuring the test command (`.github/harness.yml` is the harness's own). */
export function configRoleOf(path: string): ConfigRole {
  const name = fileName(path);
  if (name === "package.json" && !path.includes("node_modules/")) return { kind: "package-json" };
  if (path === ".github/harness.yml") return { kind: "whole" };
  if (RUNNER_CONFIG_PREFIXES.some((prefix) => name.startsWith(prefix))) return { kind: "whole" };
  const headers = SECTIONED_CONFIGS.get(name);
  return headers ? { kind: "sections", headers } : undefined;
}
