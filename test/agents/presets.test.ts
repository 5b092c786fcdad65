import { planSeatCommand, renderCommandTemplate, shellQuote } from "../../src/agents/index.js";

const paths = { promptFile: "/runs/a b/prompt.md", artifactDir: "/runs/it's/artifacts", worktree: "/wt/$(rm -rf x)" };

describe("agent presets and templates", () => {
  it("runs presets as argument arrays with the paths substituted verbatim", () => {
    expect(planSeatCommand({ preset: "claude-code" }, paths)).toEqual({
      kind: "argv",
      argv: ["claude", "-p", "--permission-mode", "bypassPermissions", "--output-format", "stream-json", "--verbose"],
      promptOnStdin: true,
      transcript: "claude-stream-json",
      // Only the model API: no telemetry, error reports or update checks from a seat.
      env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
    });
    // The budget's turns reach the CLI that can stop itself there.
    const capped = planSeatCommand({ preset: "claude-code" }, paths, { maxTurns: 7 });
    expect(capped.kind === "argv" ? capped.argv.slice(-2) : []).toEqual(["--max-turns", "7"]);
    const codex = planSeatCommand({ preset: "codex" }, paths);
    expect(codex).toMatchObject({ kind: "argv", promptOnStdin: true, transcript: "codex-json" });
    expect(codex.kind === "argv" ? codex.argv.slice(0, 3) : []).toEqual(["codex", "exec", "--json"]);
    expect(codex.kind === "argv" ? codex.argv : []).toEqual(expect.arrayContaining(["codex", "exec", "--cd", "/wt/$(rm -rf x)", "-"]));
    // Its own sandbox lets it write the artifact folder (the verdict) and keeps the network.
    const argv = codex.kind === "argv" ? codex.argv : [];
    expect(argv[argv.indexOf("--add-dir") + 1]).toBe("/runs/it's/artifacts");
    expect(argv[argv.indexOf("sandbox_workspace_write.network_access=true") - 1]).toBe("-c");
    expect(planSeatCommand({ preset: "aider" }, paths)).toEqual({
      kind: "argv",
      argv: ["aider", "--message-file", "/runs/a b/prompt.md", "--yes-always", "--no-auto-commits", "--no-check-update"],
      promptOnStdin: false,
    });
  });

  it("points codex at OPENAI_BASE_URL with -c provider overrides before the stdin marker, and leaves the other presets alone", () => {
    const codex = planSeatCommand({ preset: "codex" }, paths, { openaiBaseUrl: 'http://10.0.2.2:8080/v1"x' });
    const argv = codex.kind === "argv" ? codex.argv : [];
    expect(argv.at(-1)).toBe("-");
    expect(argv).toEqual(
      expect.arrayContaining([
        'model_provider="harness_openai"',
        'model_providers.harness_openai.base_url="http://10.0.2.2:8080/v1\\"x"',
        'model_providers.harness_openai.env_key="OPENAI_API_KEY"',
      ]),
    );
    expect(planSeatCommand({ preset: "claude-code" }, paths, { openaiBaseUrl: "http://x" })).toEqual(planSeatCommand({ preset: "claude-code" }, paths));
    expect(planSeatCommand({ preset: "codex" }, paths, {})).toEqual(planSeatCommand({ preset: "codex" }, paths));
  });

  it("shell-quotes every placeholder of a user template and leaves the rest alone", () => {
    expect(renderCommandTemplate("agent --prompt {prompt_file} --out {artifact_dir} -C {worktree} ${HOME} {other}", paths)).toBe(
      `agent --prompt '/runs/a b/prompt.md' --out '/runs/it'\\''s/artifacts' -C '/wt/$(rm -rf x)' \${HOME} {other}`,
    );
    expect(planSeatCommand({ command: "x {worktree}" }, paths)).toEqual({ kind: "shell", command: "x '/wt/$(rm -rf x)'" });
    expect(shellQuote("")).toBe("''");
  });

  it("has nothing to run without a preset or a command", () => {
    expect(() => planSeatCommand({}, paths)).toThrow(/neither a preset nor a command/);
  });
});
