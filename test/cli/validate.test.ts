import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli.js";
import type { CliIO } from "../../src/cli/usage.js";
import { DEFAULT_WORKFLOW_PATH } from "../../src/pipeline/index.js";
import { commitAll, initRepo, makeTempDir, removeTempDirs, writeFiles } from "../support/tmp.js";

afterAll(removeTempDirs);

async function validate(cwd: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const result = { code: 0, out: "", err: "" };
  const io: CliIO = { cwd, env: process.env, stdout: (text) => void (result.out += text), stderr: (text) => void (result.err += text) };
  result.code = await main(["validate", ...args], io);
  return result;
}

describe("harness validate", () => {
  it("accepts the default workflow and a valid configuration", async () => {
    const dir = makeTempDir("harness-validate-");
    expect(await validate(dir, DEFAULT_WORKFLOW_PATH)).toMatchObject({ code: 0, out: expect.stringContaining("valid workflow 'story'") });
    writeFileSync(join(dir, "harness.yml"), "agent:\n  command: sh -c true\ntest:\n  command: make test\n");
    expect(await validate(dir, "harness.yml")).toMatchObject({ code: 0, out: expect.stringContaining("valid harness configuration") });
  });

  it("exits 2 naming the file and the JSON path of an invalid workflow", async () => {
    const dir = makeTempDir("harness-validate-");
    const data = JSON.parse(readFileSync(DEFAULT_WORKFLOW_PATH, "utf8")) as { stages: Record<string, unknown>[] };
    (data.stages[2] as Record<string, unknown>).clean_clone = "../escape.json";
    writeFileSync(join(dir, "flow.json"), JSON.stringify(data));
    const result = await validate(dir, "flow.json");
    expect(result.code).toBe(2);
    expect(result.err).toContain(join(dir, "flow.json"));
    expect(result.err).toContain("$.stages[2].clean_clone");
  });

  it("exits 2 naming the JSON path of an invalid configuration, and for bad arguments", async () => {
    const dir = makeTempDir("harness-validate-");
    writeFileSync(join(dir, "harness.yaml"), "clean_clone:\n  link: [node_modules, 3]\n");
    const result = await validate(dir, "harness.yaml");
    expect(result).toMatchObject({ code: 2, err: expect.stringContaining("$.clean_clone.link[1]") });
    expect((await validate(dir)).code).toBe(2);
    expect((await validate(dir, "missing.json")).err).toContain("does not exist");
    writeFileSync(join(dir, "notes.txt"), "x");
    expect((await validate(dir, "notes.txt")).code).toBe(2);
  });

  it("runs preflight on a configuration: seat names, placeholders, programs and, inside a repository, its provisioning", async () => {
    const dir = makeTempDir("harness-validate-");
    writeFileSync(join(dir, "harness.yml"), "agent:\n  command: sh run-agent {promt_file}\nseats:\n  documentor: {}\n");
    const result = await validate(dir, "harness.yml");
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/\$\.agent\.command uses unknown placeholder \{promt_file\}.*did you mean 'prompt_file'/);
    expect(result.err).toMatch(/\$\.seats\.documentor .*did you mean 'documenter'/);
    expect(result.err).toMatch(/\$\.test\.command is required/);

    const repo = join(dir, "repo");
    await initRepo(repo, { "package.json": "{}\n", ".github/harness.yml": "agent:\n  command: sh agent.sh\ntest:\n  command: npm test\n" });
    const inRepo = await validate(repo, ".github/harness.yml");
    expect(inRepo).toMatchObject({ code: 2, err: expect.stringMatching(/\$\.provision\.command is required: package\.json has no lockfile/) });
    writeFiles(repo, { "package-lock.json": "{}\n" });
    await commitAll(repo, "lock");
    expect(await validate(repo, ".github/harness.yml")).toMatchObject({ code: 0, out: expect.stringContaining(`for ${repo}`) });
  });
});
