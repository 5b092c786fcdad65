/**
 * Settings are resolved once, at the edges: the App's entry (`src/app.ts`) and the command line
 * (`src/cli/`) read the operator's environment into a sandbox and housekeeping settings, and
 * every room below receives them as required values. A call of a `…FromEnv(` resolver anywhere
 * else would be a second, silent reading of the environment (and a default a test cannot see).
 */
import { describe, expect, it } from "@jest/globals";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** The settings resolvers only the edges may call. */
const EDGE_ONLY = new Set(["sandboxFromEnv", "housekeepingFromEnv"]);

/** The edges: the App's entry and the command line. */
function isEdge(path: string): boolean {
  return path === "app.ts" || path === "cli.ts" || path.startsWith("cli/");
}

/** The resolvers `source` calls (calls only: a definition, an import or a comment naming one is not a call). */
function resolverCalls(source: string): string[] {
  const file = ts.createSourceFile("file.ts", source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const calls: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
      if (name !== undefined && EDGE_ONLY.has(name)) calls.push(name);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return calls;
}

describe("settings resolved at the edges", () => {
  it("tells a call from a definition, an import and a comment (the check itself works)", () => {
    const source = [
      'import { sandboxFromEnv } from "../sandbox/index.js";',
      "// sandboxFromEnv() is not called here",
      "export function housekeepingFromEnv(env = process.env) { return env; }",
      "const a = args.sandbox ?? sandboxFromEnv();",
      "const b = runner.housekeepingFromEnv(process.env);",
    ].join("\n");
    expect(resolverCalls(source)).toEqual(["sandboxFromEnv", "housekeepingFromEnv"]);
  });

  it("calls sandboxFromEnv( and housekeepingFromEnv( only in src/app.ts and src/cli/", () => {
    const files = (readdirSync(SRC, { recursive: true }) as string[]).filter((path) => path.endsWith(".ts")).map((path) => join(SRC, path));
    const calls = files.flatMap((file) => resolverCalls(readFileSync(file, "utf8")).map((name) => ({ file: relative(SRC, file), name })));
    // The edges do resolve them (the scan sees real calls), and nothing below does.
    expect(calls.filter((call) => isEdge(call.file)).map((call) => call.name)).toEqual(expect.arrayContaining(["sandboxFromEnv", "housekeepingFromEnv"]));
    expect(calls.filter((call) => !isEdge(call.file))).toEqual([]);
  });
});
