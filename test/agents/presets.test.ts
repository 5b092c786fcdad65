import { planSeatCommand, renderCommandTemplate, shellQuote } from "../../src/agents/index.js";

const paths = { promptFile: "/runs/a b/prompt.md", artifactDir: "/runs/it's/artifacts", worktree: "/wt/$(rm -rf x)" };

describe("agent presets and templates", () => {
  it("runs presets as argument arrays with the paths substituted verbatim", () => {
    expect(planSeatCommand({ preset: "claude-code" }, paths)).toEqual({
      kind: "argv",
      argv: ["claude", "-p", "--permission-mode", "bypassPermissions", "--output-format", "text"],
      promptOnStdin: true,
    });
    const codex = planSeatCommand({ preset: "codex" }, paths);
    expect(codex).toMatchObject({ kind: "argv", promptOnStdin: true });
    expect(codex.kind === "argv" ? codex.argv : []).toEqual(expect.arrayContaining(["codex", "exec", "--cd", "/wt/$(rm -rf x)", "-"]));
    expect(planSeatCommand({ preset: "aider" }, paths)).toEqual({
      kind: "argv",
      argv: ["aider", "--message-file", "/runs/a b/prompt.md", "--yes-always", "--no-auto-commits", "--no-check-update"],
      promptOnStdin: false,
    });
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
