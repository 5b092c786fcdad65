import { describe, expect, it } from "@jest/globals";
import { matchesAny, patternsOverlap } from "../../src/pipeline/globs.js";
import { PlanError } from "../../src/pipeline/errors.js";
import { readStoryPlan } from "../../src/pipeline/plan.js";

const story = (plan: unknown, before = "Do the thing.\n\n"): string => `${before}\`\`\`harness-plan\n${JSON.stringify(plan, null, 2)}\n\`\`\`\n`;
const task = (id: string, files: string[], blocked_by: string[] = []): Record<string, unknown> => ({ id, title: `Task ${id}`, files, blocked_by });

function refusal(text: string): PlanError {
  try {
    readStoryPlan(text, "story #7");
  } catch (error) {
    if (error instanceof PlanError) return error;
    throw error;
  }
  throw new Error("the plan was accepted");
}

describe("readStoryPlan", () => {
  it("has no plan for a story without a harness-plan block (a plan of one task)", () => {
    expect(readStoryPlan("Just do it.\n\n```json\n{}\n```\n", "story")).toBeUndefined();
  });

  it("groups tasks into waves by what blocks them, in plan order", () => {
    const plan = readStoryPlan(
      story({ tasks: [task("a", ["src/a/**"]), task("b", ["src/b.ts"]), task("c", ["docs/"], ["a", "b"]), task("d", ["x"], ["c"])] }),
      "story",
    );
    expect(plan?.waves).toEqual([["a", "b"], ["c"], ["d"]]);
    expect(plan?.tasks.map((t) => [t.id, t.wave, t.blockedBy])).toEqual([
      ["a", 1, []],
      ["b", 1, []],
      ["c", 2, ["a", "b"]],
      ["d", 3, ["c"]],
    ]);
  });

  it("refuses a cycle, naming its tasks", () => {
    const error = refusal(story({ tasks: [task("a", ["a"], ["c"]), task("b", ["b"], ["a"]), task("c", ["c"], ["b"])] }));
    expect(error.failureClass).toBe("config-invalid");
    expect(error.message).toContain("cycle");
    expect([...error.taskIds].sort()).toEqual(["a", "b", "c"]);
  });

  it("refuses an unknown id, a duplicate id, a reserved id and a schema violation, naming the place", () => {
    expect(refusal(story({ tasks: [task("a", ["a"], ["ghost"])] })).message).toContain("$.tasks[0].blocked_by[0] task 'a' is blocked by 'ghost'");
    expect(refusal(story({ tasks: [task("a", ["a"]), task("a", ["b"])] })).message).toContain("$.tasks[1].id repeats the task id 'a'");
    expect(refusal(story({ tasks: [task("integration", ["a"])] })).taskIds).toEqual(["integration"]);
    expect(refusal(story({ tasks: [{ id: "a", title: "t", files: ["/etc/passwd"] }] })).message).toContain("$.tasks[0].files[0]");
    expect(refusal(story({ tasks: [{ id: "a", title: "t", files: ["../up"] }] })).message).toContain("$.tasks[0].files[0]");
    expect(refusal(story({ tasks: [{ id: "a", title: "t", files: ["a"], extra: 1 }] })).message).toContain("extra");
    expect(refusal("```harness-plan\n{ nope\n```\n").message).toContain("not valid JSON");
    expect(refusal("```harness-plan\n{}\n").message).toContain("never closed");
  });

  it("refuses two tasks of one wave whose files overlap, and accepts them in different waves", () => {
    const error = refusal(story({ tasks: [task("a", ["src/**"]), task("b", ["src/b/c.ts"])] }));
    expect(error.taskIds).toEqual(["a", "b"]);
    expect(error.message).toContain("wave 1");
    expect(readStoryPlan(story({ tasks: [task("a", ["src/**"]), task("b", ["src/b/c.ts"], ["a"])] }), "story")?.waves).toEqual([["a"], ["b"]]);
  });
});

describe("file patterns", () => {
  it("match paths, globs and directories", () => {
    expect(matchesAny("src/a/b.ts", ["src/**"])).toBe(true);
    expect(matchesAny("src/a/b.ts", ["src/*.ts"])).toBe(false);
    expect(matchesAny("src/b.ts", ["src/*.ts"])).toBe(true);
    expect(matchesAny("docs/x/y.md", ["docs"])).toBe(true);
    expect(matchesAny("docs/x/y.md", ["docs/"])).toBe(true);
    expect(matchesAny("docsx/y.md", ["docs"])).toBe(false);
    expect(matchesAny("a/b/c/d.ts", ["a/**/d.ts"])).toBe(true);
    expect(matchesAny("a/d.ts", ["a/**/d.ts"])).toBe(true);
    expect(matchesAny("a.b", ["a?b"])).toBe(true);
  });

  it("overlap when they may cover one path; disjoint when they cannot", () => {
    expect(patternsOverlap("src/a.ts", "src/a.ts")).toBe(true);
    expect(patternsOverlap("src", "src/a.ts")).toBe(true);
    expect(patternsOverlap("src/*.ts", "src/a.ts")).toBe(true);
    expect(patternsOverlap("src/**", "src/b/**")).toBe(true);
    expect(patternsOverlap("src/*.ts", "src/*.js")).toBe(false);
    expect(patternsOverlap("src/a/*", "src/b/*")).toBe(false);
    expect(patternsOverlap("src/a.ts", "src/b.ts")).toBe(false);
    expect(patternsOverlap("lib/**", "src/**")).toBe(false);
    expect(patternsOverlap("**/*.md", "src/**/*.ts")).toBe(false);
    expect(patternsOverlap("**/*.md", "docs")).toBe(true);
    expect(patternsOverlap("**/*.md", "docs/**")).toBe(true);
  });
});
