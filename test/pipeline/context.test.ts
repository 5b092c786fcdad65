import { loadWorkflow, parseTemplate, PLACEHOLDERS, renderPrompt, type PromptContext } from "../../src/pipeline/index.js";

const base: PromptContext = {
  story: { id: "42", title: "Add a greeting", body: "Print hello." },
  stage: "implementer",
  attempt: 1,
  maxAttempts: 3,
  artifactDir: "/runs/42/attempts/1/implementer/artifacts",
};

describe("context assembler", () => {
  it("fills the story and marks absent evidence as none", () => {
    const text = renderPrompt(loadWorkflow().stages[0]?.template ?? "", base);
    expect(text).toContain("story 42, attempt 1 of 3");
    expect(text).toContain("## Story: Add a greeting\n\nPrint hello.");
    expect(text).toContain("### Clean-clone check");
    expect(text).not.toMatch(/\{\{/);
    expect(text.match(/\(none\)/g)?.length).toBe(6);
  });

  it("carries the clean-clone result itself into a retried implementer's prompt", () => {
    const text = renderPrompt("{{previous_failure}}\n{{clean_clone_result}}\n{{retry_guidance}}", {
      ...base,
      attempt: 2,
      retry: {
        attempt: 1,
        stage: "verifier",
        failureClass: "clean-clone-failed",
        reason: "the suite failed in a fresh clone",
        cleanClone: {
          ran: true,
          command: "npm test",
          exitCode: 1,
          outputTail: "\u001b[31m1 failing\u001b[39m ``` fence",
          durationMs: 10,
          commit: "a".repeat(40),
        },
      },
    });
    expect(text).toContain("Attempt 1 failed at stage verifier (clean-clone-failed)");
    expect(text).toContain("The suite failed in a fresh clone with the change committed (command `npm test`, exit code 1).");
    expect(text).toContain(`- Commit tested: ${"a".repeat(40)}`);
    // Fenced as text, longer than any backtick run inside, with the terminal's escapes stripped.
    expect(text).toContain("````text\n1 failing ``` fence\n````");
    expect(text).not.toContain("\u001b");
    expect(text.endsWith("(none)")).toBe(true);
  });

  it("carries the verifier's findings and guidance verbatim", () => {
    const text = renderPrompt("{{previous_findings}}|{{retry_guidance}}|{{suite_result}}", {
      ...base,
      retry: { attempt: 1, stage: "verifier", failureClass: "verdict-fail", reason: "r", findings: ["a", "b"], retryGuidance: "do c" },
      suite: { command: "npm test", exitCode: 0, timedOut: false, outputTail: "ok" },
    });
    expect(text).toBe("- a\n- b|do c|Command `npm test` ended with exit code 0. Last lines of its output:\n\n```text\nok\n```");
  });

  it("knows exactly its placeholders and flags the rest", () => {
    expect(parseTemplate("{{ story_id }} {{nope}} {{attempt}}")).toEqual({ used: ["story_id", "nope", "attempt"], unknown: ["nope"] });
    expect(() => renderPrompt("{{nope}}", base)).toThrow(/unknown placeholder \{\{nope\}\}/);
    expect(PLACEHOLDERS).toContain("clean_clone_result");
  });
});
