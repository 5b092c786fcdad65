/**
 * The `harness` bin runs the compiled JavaScript in dist/ (built by Jest's global setup, as
 * `npm ci` builds through `prepare`), with no TypeScript loader in the process.
 */
import { copyFile, mkdir, readFile, readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { exec } from "../../src/exec/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const ROOT = resolve(".");
const BIN = join(ROOT, "bin/harness.js");
const RECORDER = join(ROOT, "test/fixtures/loader/record-loads.mjs");

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

afterAll(removeTempDirs);

describe("the build", () => {
  it("compiles every source file to dist/ and ships no TypeScript there", async () => {
    const sources = (await filesUnder(join(ROOT, "src"))).filter((file) => file.endsWith(".ts"));
    const built = new Set(await filesUnder(join(ROOT, "dist")));
    expect(sources.length).toBeGreaterThan(20);
    for (const source of sources) {
      const compiled = source.replace(`${ROOT}/src/`, `${ROOT}/dist/`).replace(/\.ts$/, ".js");
      expect(built.has(compiled)).toBe(true);
    }
    expect([...built].filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);
  });

  it.each([["--help"], ["validate", join(ROOT, "workflows/story-workflow.json")]])(
    "`harness %s` loads only compiled JavaScript, no TypeScript loader",
    async (...argv: string[]) => {
      const dir = makeTempDir("harness-build-");
      const record = join(dir, "loads.txt");
      const result = await exec([process.execPath, "--import", RECORDER, BIN, ...argv], {
        cwd: dir,
        env: { set: { RECORD_LOADS_TO: record } },
        captureStdout: true,
        timeoutMs: 60_000,
      });
      expect(result.exitCode).toBe(0);
      const urls = (await readFile(record, "utf8")).split("\n").filter(Boolean);
      expect(urls).toContain(`file://${ROOT}/dist/cli.js`);
      expect(urls.filter((url) => /\/tsx\/|\.tsx?$|\/src\//.test(url))).toEqual([]);
    },
  );

  it("says how to build when dist/ is missing, and exits 2", async () => {
    const dir = makeTempDir("harness-nodist-");
    await mkdir(join(dir, "bin"));
    await copyFile(BIN, join(dir, "bin/harness.js"));
    const result = await exec([process.execPath, join(dir, "bin/harness.js"), "--help"], { cwd: dir, timeoutMs: 60_000 });
    expect(result.exitCode).toBe(2);
    expect(result.tail).toContain("dist/cli.js is missing; run `npm run build`");
  });
});
