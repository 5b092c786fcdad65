import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "../support/cli.js";
import { exec } from "../../src/exec/index.js";
import { DEFAULT_WORKFLOW_PATH, findOnPath } from "../../src/pipeline/index.js";
import { commitAll, initRepo, makeTempDir, removeTempDirs, writeFiles } from "../support/tmp.js";

afterAll(removeTempDirs);

async function validate(cwd: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const { code, stdout, stderr } = await runCli(["validate", ...args], cwd);
  return { code, out: stdout, err: stderr };
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

describe("harness validate, run as a user runs it", () => {
  const BIN = fileURLToPath(new URL("../../bin/harness.js", import.meta.url));

  /** A PATH holding only sh and git: no agent CLI is installed on this "machine". */
  function barePath(): string {
    const bin = makeTempDir("harness-validate-bin-");
    for (const name of ["sh", "git"]) {
      const real = findOnPath(name, process.env.PATH ?? "");
      if (!real) throw new Error(`${name} is not on PATH; install it (apt-get install ${name === "sh" ? "dash" : "git"})`);
      symlinkSync(real, join(bin, name));
    }
    return bin;
  }

  /** Runs the built `harness validate` in a child process, as a user's shell would. */
  async function harnessValidate(cwd: string, file: string): Promise<{ code: number | null; out: string; err: string }> {
    const logs = makeTempDir("harness-validate-out-");
    const result = await exec(["sh", "-c", '"$NODE" "$0" "$@" >"$OUT" 2>"$ERR"', BIN, "validate", file], {
      cwd,
      env: { set: { PATH: barePath(), NODE: process.execPath, OUT: join(logs, "out"), ERR: join(logs, "err") } },
      timeoutMs: 60_000,
    });
    return { code: result.exitCode, out: readFileSync(join(logs, "out"), "utf8"), err: readFileSync(join(logs, "err"), "utf8") };
  }

  it("exits 0 on a valid configuration whose agent programs are not installed here, warning on stdout for each, naming the program and the key", async () => {
    const repo = join(makeTempDir("harness-validate-"), "repo");
    const yaml = "agent:\n  preset: claude-code\ntest:\n  command: make test\nseats:\n  verifier:\n    command: no-such-agent-cli --prompt {prompt_file}\n";
    await initRepo(repo, { "README.md": "x\n", ".github/harness.yml": yaml });
    const result = await harnessValidate(repo, ".github/harness.yml");
    expect(result).toMatchObject({ code: 0, err: "" });
    const lines = result.out.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^harness validate: warning: .*harness\.yml: \$\.agent\.preset is 'claude-code', whose program 'claude' is not on PATH/);
    expect(lines[1]).toMatch(/^harness validate: warning: .*harness\.yml: \$\.seats\.verifier\.command starts 'no-such-agent-cli', which is not on PATH/);
    expect(lines[2]).toBe(`${join(repo, ".github", "harness.yml")}: valid harness configuration for ${repo} (workflow 'story')`);
  });

  it("exits 2 on an invalid configuration, naming the key on stderr, and still warns about the missing program", async () => {
    const repo = join(makeTempDir("harness-validate-"), "repo");
    const yaml = "agent:\n  command: no-such-agent-cli --prompt {promt_file}\ntest:\n  command: make test\n";
    await initRepo(repo, { "README.md": "x\n", ".github/harness.yml": yaml });
    const result = await harnessValidate(repo, ".github/harness.yml");
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/\$\.agent\.command uses unknown placeholder \{promt_file\}.*did you mean 'prompt_file'/);
    expect(result.err).not.toContain("not on PATH");
    expect(result.out).toMatch(/^harness validate: warning: .*\$\.agent\.command starts 'no-such-agent-cli', which is not on PATH/);
    expect(result.out).not.toContain("valid harness configuration");
  });
});
