import { runCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const { code, stdout, stderr } = await runCli(args, makeTempDir("harness-help-"));
  return { code, out: stdout, err: stderr };
}

describe("harness <command> --help", () => {
  it.each(["serve", "run", "provision", "clean-clone", "validate"])("answers for %s with its usage and exit 0, running nothing", async (command) => {
    for (const flag of ["--help", "-h"]) {
      const result = await run([command, flag]);
      expect(result).toMatchObject({ code: 0, err: "" });
      expect(result.out).toMatch(new RegExp(`^Usage: harness ${command}`));
      expect(result.out.length).toBeGreaterThan(80);
    }
  });

  it("answers even after other options, but not after --", async () => {
    expect((await run(["clean-clone", "--command", "npm test", "--help"])).out).toMatch(/^Usage: harness clean-clone/);
    expect((await run(["run", "--story", "x.md", "--help"])).out).toContain("--continue");
    const after = await run(["validate", "--", "--help"]);
    expect(after.code).toBe(2);
    expect(after.out).toBe("");
  });
});
