/** docs/agents.md: its example wrapper runs a story end to end, and it names what the code does. */
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { COMMAND_PLACEHOLDERS } from "../../src/agents/index.js";
import { parseHarnessConfig } from "../../src/pipeline/index.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { commitAll, removeTempDirs, writeFiles } from "../support/tmp.js";
import { fakeAgentBin, prependPath } from "../agents/fake-cli.js";
import { AGENT_SCRIPT, launches, makeScenario, ofKind, runScenario } from "../pipeline/helpers.js";

afterAll(removeTempDirs);

const DOC = readFileSync(fileURLToPath(new URL("../../docs/agents.md", import.meta.url)), "utf8");

/** The fenced block whose info string is `sh agent-wrapper`. */
function wrapperScript(): string {
  const match = /^```sh agent-wrapper\n([\s\S]*?)^```$/m.exec(DOC);
  if (!match?.[1]) throw new Error("docs/agents.md has no ```sh agent-wrapper block");
  return match[1];
}

describe("docs/agents.md", () => {
  let restore: () => void = () => undefined;
  afterEach(() => restore());

  it("its example wrapper drives a whole story, with Claude Code's stand-in behind it", async () => {
    const s = await makeScenario({ ".harness/agent.sh": wrapperScript() });
    writeFiles(s.repo, {
      ".github/harness.yml":
        'agent:\n  command: "sh .harness/agent.sh {prompt_file} {artifact_dir}"\ntest:\n  command: test -f feature.txt\nprovision:\n  command: "true"\n',
    });
    await commitAll(s.repo, "add the agent wrapper");
    const bin = fakeAgentBin({ claude: [`work ${AGENT_SCRIPT} ${s.launches}`] });
    restore = prependPath(bin.dir);
    const config = parseHarnessConfig(readFileSync(`${s.repo}/.github/harness.yml`, "utf8"), ".github/harness.yml");
    const sandbox = new Sandbox(
      sandboxSettingsFromEnv({ ...process.env, HARNESS_SANDBOX_READ: dirname(AGENT_SCRIPT), HARNESS_SANDBOX_WRITE: `${dirname(s.launches)}:${bin.dir}` }),
    );
    const { outcome, journal } = await runScenario(s, config, { sandbox });
    expect(outcome.status).toBe("completed");
    expect(bin.calls()).toEqual(["claude work", "claude work", "claude work", "claude work"]);
    expect(launches(s)).toEqual(["implementer 1", "tester 1", "verifier 1", "documenter 1"]);
    expect(ofKind(journal, "verdict.recorded")[0]).toMatchObject({ verdict: "pass" });
    const log = readFileSync(`${outcome.runDir}/attempts/1/implementer/agent.log`, "utf8");
    expect(log).toContain("seat implementer, attempt 1, in ");
  });

  it("names every placeholder, HARNESS_* variable, artifact schema and agent failure class the code uses", () => {
    for (const name of COMMAND_PLACEHOLDERS) expect(DOC).toContain(`{${name}}`);
    for (const name of ["HARNESS_STAGE", "HARNESS_ATTEMPT", "HARNESS_PROMPT_FILE", "HARNESS_ARTIFACT_DIR", "HARNESS_AGENT_ENV"]) expect(DOC).toContain(name);
    for (const name of [
      "schemas/verdict.schema.json",
      "verdict.json",
      "agent-exit",
      "agent-timeout",
      "agent-unavailable",
      "artifact-missing",
      "artifact-invalid",
      "baseline-red",
      "environment",
    ]) {
      expect(DOC).toContain(name);
    }
    for (const reason of ["root-refused", "auth-missing", "provider-unreachable", "rate-limited", "not-installed"]) expect(DOC).toContain(`\`${reason}\``);
  });
});
