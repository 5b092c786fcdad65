/**
 * The preflight table: each mistake a new user made on a real repository is refused by
 * `harness run` with exit 2, naming the file and the key, before anything is provisioned
 * or any agent launched.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli.js";
import type { CliIO } from "../../src/cli/usage.js";
import { findOnPath } from "../../src/pipeline/index.js";
import { commitAll, makeTempDir, removeTempDirs, writeFiles } from "../support/tmp.js";
import { AGENT_SCRIPT, launches, makeScenario, q, type Scenario } from "../pipeline/helpers.js";

afterAll(removeTempDirs);

/** A PATH holding only the programs a run needs (sh, git), so no agent CLI is found on it. */
function barePath(): string {
  const bin = makeTempDir("harness-bare-path-");
  for (const name of ["sh", "git"]) {
    const real = findOnPath(name, process.env.PATH ?? "");
    if (!real) throw new Error(`${name} is not on PATH`);
    symlinkSync(real, join(bin, name));
  }
  return bin;
}

/** The PATH with a folder in the OS temporary folder (which the sandbox hides) first, holding a `claude` and a test runner. */
function hiddenPath(): string {
  const bin = makeTempDir("harness-hidden-bin-");
  writeFiles(bin, { claude: { content: "#!/bin/sh\nexit 0\n", mode: 0o755 }, "hidden-test-runner": { content: "#!/bin/sh\nexit 0\n", mode: 0o755 } });
  return `${bin}:${process.env.PATH ?? ""}`;
}

interface Case {
  name: string;
  /** `.github/harness.yml`; `{agent}` stands for the scripted agent's command. */
  yaml: string;
  files?: Record<string, string>;
  args?: string[];
  env?: Record<string, string>;
  expected: RegExp[];
}

const agentLine = (s: Scenario): string => JSON.stringify(`sh ${q(AGENT_SCRIPT)} complete ${q(s.launches)}`);
const base = 'test:\n  command: test -f feature.txt\nprovision:\n  command: "true"\n';

const CASES: Case[] = [
  { name: "a blank --test-cmd", yaml: `agent:\n  command: {agent}\n${base}`, args: ["--test-cmd", "  "], expected: [/--test-cmd must not be blank/] },
  {
    name: "a clean_clone.link that leaves the repository",
    yaml: `agent:\n  command: {agent}\n${base}clean_clone:\n  link: [node_modules, ../outside]\n`,
    expected: [/harness\.yml: \$\.clean_clone\.link\[1\] is '\.\.\/outside'/],
  },
  {
    name: "an interpreter that is not on this machine (the README's python3.10 on Debian 12)",
    yaml: `agent:\n  command: {agent}\n${base}clean_clone:\n  interpreter: {missing}/python3.10\n`,
    expected: [/\$\.clean_clone\.interpreter is '.*python3\.10', which is not an executable file/],
  },
  {
    name: "an interpreter climbing out of the repository (into the shared package cache)",
    yaml: `agent:\n  command: {agent}\n${base}clean_clone:\n  interpreter: ../../../cache/npm/evil.sh\n`,
    expected: [/\$\.clean_clone\.interpreter is '\.\.\/\.\.\/\.\.\/cache\/npm\/evil\.sh', which leaves the repository/],
  },
  {
    name: "a seat name that is no seat of the workflow",
    yaml: `agent:\n  command: {agent}\n${base}seats:\n  verifer:\n    timeout_minutes: 5\n`,
    expected: [/\$\.seats\.verifer names no seat of workflow 'story'/, /did you mean 'verifier'\?/],
  },
  {
    name: "a placeholder typo in the agent's command template",
    yaml: `agent:\n  command: "sh -c 'cat \\"$0\\"' {prompt_fil}"\n${base}`,
    expected: [/\$\.agent\.command uses unknown placeholder \{prompt_fil\}/, /did you mean 'prompt_file'\?/],
  },
  {
    name: "agent.env naming one of the App's own credentials",
    yaml: `agent:\n  command: {agent}\n  env: [PRIVATE_KEY]\n${base}`,
    expected: [/\$\.agent\.env\[0\] asks for 'PRIVATE_KEY', one of the App's own credentials/],
  },
  {
    name: "no agent configured, and the default preset's program not installed",
    yaml: base,
    env: { PATH: "{bare}" },
    expected: [/\$\.agent\.preset is 'claude-code', whose program 'claude' is not on PATH/, /@anthropic-ai\/claude-code/],
  },
  {
    name: "a command template whose program does not exist",
    yaml: `agent:\n  command: no-such-agent-cli --prompt {prompt_file}\n${base}`,
    expected: [/\$\.agent\.command starts 'no-such-agent-cli', which is not on PATH/],
  },
  {
    // A CLI under ~/.local/bin, ~/.nvm or the temporary folder passes the host's PATH and cannot start in the sandbox.
    name: "an agent CLI in a folder the sandbox does not show",
    yaml: `agent:\n  preset: claude-code\n${base}`,
    env: { PATH: "{hidden}" },
    expected: [
      /\$\.agent\.preset is 'claude-code', whose program 'claude' is found at \/\S+\/claude, which the sandbox does not show its steps .*HARNESS_SANDBOX_READ/,
    ],
  },
  {
    name: "a test command whose program the sandbox does not show",
    yaml: `agent:\n  command: {agent}\ntest:\n  command: hidden-test-runner --all\nprovision:\n  command: "true"\n`,
    env: { PATH: "{hidden}" },
    expected: [
      /\$\.test\.command starts 'hidden-test-runner', found at \/\S+hidden-test-runner, which the sandbox does not show its steps .*HARNESS_SANDBOX_READ/,
    ],
  },
  {
    name: "a package.json without a lockfile and without a provisioning command",
    yaml: "agent:\n  command: {agent}\ntest:\n  command: npm test\n",
    files: { "package.json": '{"name":"demo","scripts":{"test":"kcd-scripts test"}}\n' },
    expected: [/\$\.provision\.command is required: package\.json has no lockfile/],
  },
];

describe("preflight in harness run", () => {
  it.each(CASES)("refuses $name with exit 2, naming the key, before anything is provisioned", async (testCase) => {
    const s = await makeScenario(testCase.files ?? {});
    const missing = join(s.dir, "no-such-dir");
    const yaml = testCase.yaml.replace("{agent}", agentLine(s)).replace("{missing}", missing);
    writeFiles(s.repo, { ".github/harness.yml": yaml });
    await commitAll(s.repo, "configure the harness");
    const story = join(s.dir, "story.md");
    writeFileSync(story, "# Greet\n\nWrite feature.txt.\n");
    const env: NodeJS.ProcessEnv = { ...process.env, HARNESS_HOME: s.home };
    for (const [name, value] of Object.entries(testCase.env ?? {})) env[name] = value === "{bare}" ? barePath() : value === "{hidden}" ? hiddenPath() : value;
    const io: CliIO & { out: string; err: string } = {
      out: "",
      err: "",
      cwd: s.repo,
      env,
      stdout: (text) => void (io.out += text),
      stderr: (text) => void (io.err += text),
    };
    const code = await main(["run", "--story", story, ...(testCase.args ?? [])], io);
    expect(code).toBe(2);
    for (const pattern of testCase.expected) expect(io.err).toMatch(pattern);
    if (!testCase.args) expect(io.err).toContain(join(s.repo, ".github", "harness.yml"));
    // Nothing was provisioned, no run directory made, no agent launched.
    expect(existsSync(s.home)).toBe(false);
    expect(launches(s)).toEqual([]);
  });

  it("lists every problem at once, and accepts a package.json with a provisioning hook", async () => {
    const s = await makeScenario({ "package.json": "{}\n" });
    mkdirSync(join(s.repo, ".harness"), { recursive: true });
    writeFiles(s.repo, { ".harness/provision.sh": { content: "#!/bin/sh\nnpm install\n", mode: 0o755 } });
    writeFiles(s.repo, { ".github/harness.yml": `agent:\n  command: ${agentLine(s)}\n  env: [GITHUB_TOKEN]\ntest:\n  command: " "\nseats:\n  testr: {}\n` });
    await commitAll(s.repo, "configure");
    const story = join(s.dir, "story.md");
    writeFileSync(story, "# Greet\n");
    let err = "";
    const io: CliIO = { cwd: s.repo, env: { ...process.env, HARNESS_HOME: s.home }, stdout: () => undefined, stderr: (text) => void (err += text) };
    expect(await main(["run", "--story", story], io)).toBe(2);
    expect(err).toMatch(/\$\.test\.command is blank/);
    expect(err).toMatch(/\$\.agent\.env\[0\] asks for 'GITHUB_TOKEN'/);
    expect(err).toMatch(/\$\.seats\.testr .*did you mean 'tester'/);
    expect(err).not.toMatch(/provision\.command/);
  });
});
