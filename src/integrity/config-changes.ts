/**
 * Findings on what defines and runs the suite: the test scripts and runner keys of
 * `package.json`, a runner's configuration file (or its section of `pyproject.toml`,
 * `setup.cfg`, `tox.ini`), a coverage threshold lowered, and GitHub Actions workflows.
 */
import { firstDifferingLine, lineOf, type FileChange, type Finding } from "./change.js";
import { configRoleOf, isWorkflowPath } from "./paths.js";
import { squeeze } from "./scan.js";

/** Keys of `package.json` that configure a test runner or its coverage. */
const PACKAGE_RUNNER_KEYS = ["jest", "mocha", "c8", "nyc", "ava", "vitest"];
/** Coverage threshold settings, as written in JSON, YAML, TOML, INI or on a command line. */
const THRESHOLD_KEYS = ["branches", "functions", "lines", "statements", "fail_under", "fail-under", "minimum_coverage", "check-coverage"];

/** Scripts that run the tests: `test`, `pretest`, `posttest`, `test:*`. */
function isTestScript(name: string): boolean {
  return name === "test" || name === "pretest" || name === "posttest" || name.startsWith("test:");
}

/** The findings on configuration and workflows among `changes`. */
export function configFindings(changes: readonly FileChange[], options: { workflows: boolean }): Finding[] {
  const findings: Finding[] = [];
  for (const change of changes) {
    const file = change.newPath ?? change.oldPath ?? "";
    if (options.workflows && (isWorkflowPath(change.oldPath ?? "") || isWorkflowPath(change.newPath ?? ""))) {
      const how = change.status === "deleted" ? "deleted" : change.status === "added" ? "added" : "changed";
      findings.push({ file, line: firstDifferingLine(change.oldText, change.newText), kind: "ci-workflow-changed", message: `CI workflow ${how}` });
      continue;
    }
    const role = configRoleOf(change.newPath ?? "") ?? configRoleOf(change.oldPath ?? "");
    if (!role) continue;
    if (role.kind === "package-json") findings.push(...packageFindings(file, change));
    else {
      const before = role.kind === "whole" ? change.oldText : sections(change.oldText, role.headers);
      const after = role.kind === "whole" ? change.newText : sections(change.newText, role.headers);
      if (before === after) continue;
      const line = role.kind === "whole" ? firstDifferingLine(before, after) : firstDifferingLine(change.oldText, change.newText);
      const how = change.status === "deleted" ? "deleted" : change.status === "added" ? "added" : "changed";
      findings.push({ file, line, kind: "test-config-changed", message: `test configuration ${how}` });
    }
    findings.push(...thresholdFindings(file, change.oldText, change.newText));
  }
  return findings;
}

/** The test scripts and runner keys of `package.json`, compared key by key. */
function packageFindings(file: string, change: FileChange): Finding[] {
  const before = parseObject(change.oldText);
  const after = parseObject(change.newText);
  if (!before && !after) return [];
  const findings: Finding[] = [];
  const scripts = (json: Record<string, unknown> | undefined): Record<string, unknown> => {
    const value = json?.scripts;
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  };
  const names = new Set([...Object.keys(scripts(before)), ...Object.keys(scripts(after))].filter(isTestScript));
  for (const name of [...names].sort()) {
    const old = scripts(before)[name];
    const next = scripts(after)[name];
    if (JSON.stringify(old) === JSON.stringify(next)) continue;
    const shown = typeof next === "string" ? `now \`${next.slice(0, 200).split("`").join("'")}\`` : "removed";
    findings.push({ file, line: lineOf(change.newText, `"${name}"`), kind: "test-config-changed", message: `script \`${name}\` changed: ${shown}` });
  }
  for (const key of PACKAGE_RUNNER_KEYS) {
    if (JSON.stringify(before?.[key]) === JSON.stringify(after?.[key])) continue;
    findings.push({ file, line: lineOf(change.newText, `"${key}"`), kind: "test-config-changed", message: `\`${key}\` configuration changed` });
  }
  return findings;
}

/** A JSON object, or undefined for anything else (text that does not parse is not judged). */
function parseObject(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The text of the INI/TOML sections whose header starts with one of `headers`, in order. */
function sections(text: string | undefined, headers: readonly string[]): string | undefined {
  if (text === undefined) return undefined;
  const kept: string[] = [];
  let inside = false;
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed.startsWith("[")) inside = headers.some((header) => trimmed.startsWith(header));
    if (inside) kept.push(line);
  }
  return kept.join("\n");
}

interface Threshold {
  key: string;
  value: number;
  line: number;
}

/** Every coverage threshold of a configuration text, in order: `key` `"`? `:`|`=` number. */
function thresholds(text: string | undefined): Threshold[] {
  if (text === undefined) return [];
  const found: Threshold[] = [];
  text.split("\n").forEach((raw, index) => {
    const line = squeeze(raw).toLowerCase();
    for (const key of THRESHOLD_KEYS) {
      for (let at = line.indexOf(key); at >= 0; at = line.indexOf(key, at + key.length)) {
        const before = line.charCodeAt(at - 1);
        if (at > 0 && ((before >= 0x61 && before <= 0x7a) || before === 0x5f)) continue;
        let i = at + key.length;
        if (line[i] === '"' || line[i] === "'") i += 1;
        if (line[i] !== ":" && line[i] !== "=") continue;
        i += 1;
        let end = i;
        while (end < line.length && ((line.charCodeAt(end) >= 0x30 && line.charCodeAt(end) <= 0x39) || line[end] === ".")) end += 1;
        const value = Number(line.slice(i, end));
        if (end > i && Number.isFinite(value)) found.push({ key, value, line: index + 1 });
      }
    }
  });
  return found;
}

/** A threshold lowered or removed, key by key in the order they appear. */
function thresholdFindings(file: string, before: string | undefined, after: string | undefined): Finding[] {
  const old = thresholds(before);
  const next = thresholds(after);
  const findings: Finding[] = [];
  for (const key of THRESHOLD_KEYS) {
    const was = old.filter((entry) => entry.key === key);
    const now = next.filter((entry) => entry.key === key);
    was.forEach((entry, index) => {
      const current = now[index];
      if (current && current.value >= entry.value) return;
      const message = current
        ? `coverage threshold \`${key}\` lowered from ${entry.value} to ${current.value}`
        : `coverage threshold \`${key}\` (${entry.value}) removed`;
      findings.push({ file, line: current?.line ?? 1, kind: "coverage-lowered", message });
    });
  }
  return findings;
}
