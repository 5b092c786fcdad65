/**
 * A preset CLI's successful start in the sandbox is kept per host in HARNESS_HOME: the next
 * story spawns no `--version` while the program, its interpreter and the sandbox's settings are
 * unchanged; a failure is never kept; a corrupt file is ignored and rewritten; a seat that finds
 * the CLI not installed drops the entry. The fake CLIs log each `--version` to versions.log.
 */
import { chmodSync, copyFileSync, existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadWorkflow, parseHarnessConfig, type HarnessConfig } from "../../src/pipeline/index.js";
import { agentStartsPath } from "../../src/pipeline/agent-start-cache.js";
import { agentsThatCannotStart } from "../../src/pipeline/agent-starts.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { schemas } from "../../src/schema/index.js";
import { makeTempDir, removeTempDirs, writeFiles } from "../support/tmp.js";
import { fakeAgentBin, prependPath, type FakeBin } from "../agents/fake-cli.js";
import { AGENT_SCRIPT, makeScenario, ofKind, runScenario, type Scenario } from "./helpers.js";

afterAll(removeTempDirs);

let restore: () => void = () => undefined;
afterEach(() => restore());

const presetConfig = (agent: string): HarnessConfig =>
  parseHarnessConfig(`agent:\n${agent}\ntest:\n  command: test -f feature.txt\nprovision:\n  command: "true"\n`, "harness.yml");

/** The sandbox granting the fake CLIs' folder (read and write: they log there) and the scenario's launch log. */
function sandboxFor(bin: string, launches?: string): Sandbox {
  const read = [dirname(AGENT_SCRIPT), bin].join(":");
  const write = [...(launches ? [dirname(launches)] : []), bin].join(":");
  return new Sandbox(sandboxSettingsFromEnv({ ...process.env, HARNESS_SANDBOX_READ: read, HARNESS_SANDBOX_WRITE: write }));
}

/** The `--version` calls the fake CLIs of `bin` answered. */
function versions(bin: string): string[] {
  const file = join(bin, "versions.log");
  return existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];
}

function kept(home: string): { program: string }[] {
  const record = JSON.parse(readFileSync(agentStartsPath(home), "utf8")) as { starts: { program: string }[] };
  expect(schemas().issues("agent-starts", record)).toEqual([]);
  return record.starts;
}

/** One start check (what the coordinator asks before any seat) with HARNESS_HOME `home`. */
async function check(config: HarnessConfig, bin: string, home: string, launches?: string): Promise<string | undefined> {
  return agentsThatCannotStart(config, loadWorkflow(), sandboxFor(bin, launches), makeTempDir("harness-start-logs-"), home);
}

/** A second scenario on the same host: its own repository, the first one's HARNESS_HOME and launch log (so the sandbox's settings are the same). */
async function sameHost(first: Scenario): Promise<Scenario> {
  return { ...(await makeScenario()), home: first.home, launches: first.launches };
}

describe("a CLI's start kept per host", () => {
  it("the second story on the same host spawns no --version; the kept file is schema-valid", async () => {
    const first = await makeScenario();
    const fakes: FakeBin = fakeAgentBin({ claude: [`work ${AGENT_SCRIPT} ${first.launches}`] });
    restore = prependPath(fakes.dir);
    const config = presetConfig("  preset: claude-code");
    const one = await runScenario(first, config, { sandbox: sandboxFor(fakes.dir, first.launches) });
    expect(one.outcome.status).toBe("completed");
    expect(versions(fakes.dir)).toEqual(["claude --version"]);
    expect(kept(first.home).map((entry) => entry.program)).toEqual(["claude"]);

    const second = await sameHost(first);
    const two = await runScenario(second, config, { sandbox: sandboxFor(fakes.dir, second.launches) });
    expect(two.outcome.status).toBe("completed");
    expect(versions(fakes.dir)).toEqual(["claude --version"]);
    expect(existsSync(join(two.outcome.runDir, "logs", "agent-start-claude-code"))).toBe(false);
  });

  it("checks again when the program's mtime or size changes, its interpreter changes, or the sandbox's grants do", async () => {
    const home = makeTempDir();
    const fakes = fakeAgentBin({ claude: ["work"] });
    restore = prependPath(fakes.dir);
    const config = presetConfig("  preset: claude-code");
    await expect(check(config, fakes.dir, home)).resolves.toBeUndefined();
    await expect(check(config, fakes.dir, home)).resolves.toBeUndefined();
    expect(versions(fakes.dir)).toHaveLength(1);

    const program = join(fakes.dir, "claude");
    const later = new Date(statSync(program).mtimeMs + 60_000);
    utimesSync(program, later, later);
    await check(config, fakes.dir, home);
    expect(versions(fakes.dir)).toHaveLength(2);

    writeFileSync(program, `${readFileSync(program, "utf8")}# reinstalled\n`);
    utimesSync(program, later, later);
    await check(config, fakes.dir, home);
    expect(versions(fakes.dir)).toHaveLength(3);

    // A script whose interpreter is upgraded in place: its own file unchanged, the start checked again.
    const interpreter = join(fakes.dir, "interp");
    copyFileSync("/bin/sh", interpreter);
    chmodSync(interpreter, 0o755);
    writeFileSync(program, readFileSync(program, "utf8").replace("#!/bin/sh", `#!${interpreter}`));
    await check(config, fakes.dir, home);
    await check(config, fakes.dir, home);
    expect(versions(fakes.dir)).toHaveLength(4);
    const newer = new Date(statSync(interpreter).mtimeMs + 60_000);
    utimesSync(interpreter, newer, newer);
    await check(config, fakes.dir, home);
    expect(versions(fakes.dir)).toHaveLength(5);

    // Another folder granted: what a step sees changed.
    await check(config, fakes.dir, home, join(makeTempDir(), "launches.log"));
    expect(versions(fakes.dir)).toHaveLength(6);
  });

  it("never keeps a failed start: a CLI that fails is started at every story, and a kept start it replaces is dropped", async () => {
    const home = makeTempDir();
    const fakes = fakeAgentBin({ claude: ["work"] });
    restore = prependPath(fakes.dir);
    const config = presetConfig("  preset: claude-code");
    await check(config, fakes.dir, home);
    expect(kept(home).map((entry) => entry.program)).toEqual(["claude"]);

    const program = join(fakes.dir, "claude");
    writeFiles(fakes.dir, {
      claude: {
        content: `#!/bin/sh\necho "claude --version" >> '${fakes.dir}/versions.log'\necho "Error: claude native binary not installed." >&2\nexit 1\n`,
        mode: 0o755,
      },
    });
    utimesSync(program, new Date(Date.now() + 120_000), new Date(Date.now() + 120_000));
    await expect(check(config, fakes.dir, home)).resolves.toContain("'claude --version' exited 1: Error: claude native binary not installed.");
    expect(kept(home)).toEqual([]);
    await expect(check(config, fakes.dir, home)).resolves.toContain("exited 1");
    expect(versions(fakes.dir)).toHaveLength(3);
  });

  it("ignores a corrupt file or one of another version, and rewrites it valid", async () => {
    const fakes = fakeAgentBin({ claude: ["work"] });
    restore = prependPath(fakes.dir);
    const config = presetConfig("  preset: claude-code");
    for (const [index, text] of ['{"version":1,"starts":[{"program":"claude"', '{"version":2,"starts":[]}\n', "[]\n"].entries()) {
      const home = makeTempDir();
      writeFiles(home, { "host/agent-starts.json": text });
      await expect(check(config, fakes.dir, home)).resolves.toBeUndefined();
      expect(versions(fakes.dir)).toHaveLength(index + 1);
      expect(kept(home).map((entry) => entry.program)).toEqual(["claude"]);
    }
  });

  it("a seat that finds a kept CLI not installed drops its entry (the fallback's stays), so the next story checks it again", async () => {
    const first = await makeScenario();
    const fakes = fakeAgentBin({ claude: ["not-installed"], codex: [`work ${AGENT_SCRIPT} ${first.launches}`] });
    restore = prependPath(fakes.dir);
    const config = presetConfig("  preset: claude-code\n  fallback: [codex]");
    const { outcome, journal } = await runScenario(first, config, { sandbox: sandboxFor(fakes.dir, first.launches) });
    expect(outcome.status).toBe("completed");
    expect(ofKind(journal, "seat.unavailable")[0]).toMatchObject({ reason: "not-installed" });
    expect(kept(first.home).map((entry) => entry.program)).toEqual(["codex"]);
    expect(versions(fakes.dir).sort()).toEqual(["claude --version", "codex --version"]);

    await check(config, fakes.dir, first.home, first.launches);
    expect(versions(fakes.dir).sort()).toEqual(["claude --version", "claude --version", "codex --version"]);
  });
});
