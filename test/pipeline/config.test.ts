import {
  assertAgentEnvAllowed,
  checkRunnable,
  ConfigError,
  DEFAULT_HARNESS_CONFIG,
  loadWorkflow,
  parseHarnessConfig,
  withOverrides,
} from "../../src/pipeline/index.js";
import { SchemaValidationError } from "../../src/schema/index.js";

const FULL = `
agent:
  preset: codex
  env: [OPENAI_API_KEY]
  timeout_minutes: 20
seats:
  verifier:
    command: "my-judge --prompt {prompt_file}"
    timeout_minutes: 5
  documenter:
    enabled: false
test:
  command: npm test
  timeout_minutes: 10
provision:
  command: npm ci
  timeout_minutes: 15
max_attempts: 4
plan:
  concurrency: 3
budget:
  max_turns_per_seat: 40
  max_agent_minutes: 90
  max_tokens: 2000000
clean_clone:
  link: [node_modules]
  interpreter: /usr/bin/python3.10
`;

describe("parseHarnessConfig", () => {
  it("normalises every key to the harness's terms", () => {
    const config = parseHarnessConfig(FULL, ".github/harness.yml");
    expect(config).toEqual({
      agent: { preset: "codex", env: ["OPENAI_API_KEY"], timeoutMs: 1_200_000 },
      seats: {
        verifier: { enabled: true, command: "my-judge --prompt {prompt_file}", timeoutMs: 300_000 },
        documenter: { enabled: false },
      },
      test: { command: "npm test", timeoutMs: 600_000 },
      provision: { command: "npm ci", timeoutMs: 900_000 },
      maxAttempts: 4,
      cleanClone: { link: ["node_modules"], interpreter: "/usr/bin/python3.10" },
      plan: { concurrency: 3 },
      budget: { maxTurnsPerSeat: 40, maxAgentMs: 5_400_000, maxTokens: 2_000_000 },
    });
  });

  it("gives an empty file the defaults", () => {
    expect(parseHarnessConfig("", "harness.yml")).toEqual(DEFAULT_HARNESS_CONFIG);
    expect(parseHarnessConfig("# nothing\n", "harness.yml").agent.preset).toBe("claude-code");
  });

  it("refuses a typo, naming the file and the JSON path", () => {
    expect(() => parseHarnessConfig("test:\n  comand: npm test\n", ".github/harness.yml")).toThrow(SchemaValidationError);
    expect(() => parseHarnessConfig("test:\n  comand: npm test\n", ".github/harness.yml")).toThrow(".github/harness.yml: $.test.comand is not an allowed key");
    expect(() => parseHarnessConfig("agent:\n  preset: gpt\n", "h.yml")).toThrow(/\$\.agent\.preset must be one of/);
    expect(() => parseHarnessConfig("max_attempts: 0\n", "h.yml")).toThrow(/\$\.max_attempts/);
    expect(() => parseHarnessConfig("agent:\n  preset: aider\n  command: x\n", "h.yml")).toThrow(/\$\.agent/);
  });

  it("names the line of a YAML syntax error", () => {
    expect(() => parseHarnessConfig("agent: [unclosed\n", "h.yml")).toThrow(ConfigError);
    expect(() => parseHarnessConfig("agent: [unclosed\n", "h.yml")).toThrow(/h\.yml: \$ is not valid YAML/);
  });
});

describe("agent environment", () => {
  it("must be a subset of the operator's allowlist; the error names the key", () => {
    const config = parseHarnessConfig("agent:\n  env: [ANTHROPIC_API_KEY, AWS_SECRET]\n", ".github/harness.yml");
    expect(() => assertAgentEnvAllowed(config, ["ANTHROPIC_API_KEY", "AWS_SECRET"], "x")).not.toThrow();
    expect(() => assertAgentEnvAllowed(config, ["ANTHROPIC_API_KEY"], ".github/harness.yml")).toThrow(
      ".github/harness.yml: $.agent.env[1] asks for 'AWS_SECRET', which the operator does not allow agents to receive",
    );
  });
});

describe("checkRunnable and overrides", () => {
  it("requires a test command when a stage runs the suite", () => {
    const workflow = loadWorkflow();
    expect(() => checkRunnable(DEFAULT_HARNESS_CONFIG, workflow, [], "h.yml")).toThrow(/\$\.test\.command is required/);
    const config = withOverrides(DEFAULT_HARNESS_CONFIG, { testCommand: "make test" });
    expect(checkRunnable(config, workflow, [], "h.yml")).toEqual({ testCommand: "make test" });
  });

  it("lets a flag replace a preset with a template and the other way round, without touching the original", () => {
    const template = withOverrides(DEFAULT_HARNESS_CONFIG, { agentCommand: "run-agent {prompt_file}" });
    expect(template.agent).toMatchObject({ command: "run-agent {prompt_file}" });
    expect(template.agent.preset).toBeUndefined();
    expect(withOverrides(template, { agentPreset: "aider" }).agent).toMatchObject({ preset: "aider" });
    expect(DEFAULT_HARNESS_CONFIG.agent.command).toBeUndefined();
  });
});
