/**
 * A vitest project with a TypeScript config in the clean clone, sandboxed: vitest bundles its
 * config into `node_modules/.vite-temp` and keeps its results under `node_modules/.vite`, so a
 * linked `node_modules` that cannot take writes fails every such project for no fault of the
 * change (a false red). The writes must land in the clone, never in the user's tree.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";
import { runCleanCloneCheck } from "../../src/workspace/index.js";
import { copyInstalledPackages } from "../support/node-packages.js";
import { observe, removeTemps, repoWith, temp, write } from "./clean-clone-fixtures.js";

afterAll(removeTemps);

const VITEST = "node node_modules/vitest/vitest.mjs run";

/** A TypeScript project tested by vitest, configured in `vitest.config.ts`, with its install in place (not committed). */
async function vitestProject(): Promise<string> {
  const repo = await repoWith({
    ".gitignore": "node_modules/\n",
    "package.json": JSON.stringify({ name: "sums", private: true, type: "module", scripts: { test: "vitest run" } }, null, 2),
    "vitest.config.ts":
      'import { defineConfig } from "vitest/config";\n\nconst include: string[] = ["test/**/*.test.ts"];\nexport default defineConfig({ test: { include } });\n',
    "src/sum.ts": "export const sum = (a: number, b: number): number => a + b;\n",
    "test/sum.test.ts": 'import { expect, it } from "vitest";\nimport { sum } from "../src/sum";\n\nit("adds", () => expect(sum(2, 3)).toBe(5));\n',
  });
  copyInstalledPackages(process.cwd(), ["vitest"], repo);
  return repo;
}

describe("the clean clone of a vitest project", () => {
  it("passes where its suite passes, with vitest's writes into node_modules kept out of the user's tree", async () => {
    const repo = await vitestProject();
    // The user ran the suite before: vitest left its cache in their node_modules.
    const own = await exec(["/bin/sh", "-c", VITEST], { cwd: repo, timeoutMs: 120_000 });
    expect({ exitCode: own.exitCode, tail: own.tail }).toMatchObject({ exitCode: 0 });
    // A benign change, not committed yet.
    write(repo, { "src/sum.ts": "// Adds two numbers.\nexport const sum = (a: number, b: number): number => a + b;\n" });
    const before = await observe(repo);
    const scratchRoot = temp("cc-vitest-root-");
    const result = await runCleanCloneCheck({ sandbox: sandboxFromEnv(), repo, command: VITEST, scratchRoot, timeoutMs: 120_000 });
    expect({ ran: result.ran, exitCode: result.exitCode, reason: result.reason, tail: result.outputTail }).toMatchObject({ ran: true, exitCode: 0 });
    expect(result.outputTail).toMatch(/1 passed/);
    expect(result.linked).toEqual(["node_modules"]);
    // Not a file of the user's tree changed: their node_modules and vitest's caches in it included.
    expect(await observe(repo)).toEqual(before);
    expect(existsSync(join(repo, "node_modules", ".vite", "vitest"))).toBe(true);
  }, 240_000);

  it("fails where the committed change breaks the suite (the layer hides no failure)", async () => {
    const repo = await vitestProject();
    write(repo, { "src/sum.ts": "export const sum = (a: number, b: number): number => a - b;\n" });
    const result = await runCleanCloneCheck({ sandbox: sandboxFromEnv(), repo, command: VITEST, scratchRoot: temp("cc-vitest-root-"), timeoutMs: 120_000 });
    expect({ ran: result.ran, exitCode: result.exitCode }).toEqual({ ran: true, exitCode: 1 });
    expect(result.outputTail).toMatch(/1 failed/);
  }, 240_000);
});
