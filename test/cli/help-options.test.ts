/**
 * The command line a newcomer meets: every option a command takes is in its `--help`, a
 * misspelt command or option is answered with the nearest one, and `--version` answers.
 */
import { readFileSync } from "node:fs";
import { commandHelp } from "../../src/cli/help.js";
import { COMMAND_OPTIONS } from "../../src/cli/options.js";
import { runCli } from "../support/cli.js";

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(argv, process.cwd());
}

describe("the command line's help", () => {
  it.each(Object.entries(COMMAND_OPTIONS))("harness %s --help lists every option the command takes", async (command, options) => {
    const run = await cli(command, "--help");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(commandHelp(command));
    for (const name of Object.keys(options).filter((name) => name !== "help")) expect(run.stdout).toMatch(new RegExp(`--${name}\\b`));
  });

  it("harness --help spells the command flags as the commands' own help does, not by their old names", async () => {
    const run = await cli("--help");
    expect(run.stdout).toMatch(/harness clean-clone \[<repo>\] \[--test-cmd <string>\]/);
    expect(run.stdout).toMatch(/harness provision <worktree> \[--provision-cmd <string>\]/);
    expect(run.stdout).not.toMatch(/--command\b|--cmd\b/);
  });

  it("--version prints the package's version", async () => {
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    for (const flag of ["--version", "-V", "version"]) expect(await cli(flag)).toEqual({ code: 0, stdout: `story-harness ${version}\n`, stderr: "" });
  });

  it("answers a misspelt command or option with the nearest one", async () => {
    const command = await cli("clean-clnoe");
    expect(command.code).toBe(2);
    expect(command.stderr).toMatch(/^harness: unknown command 'clean-clnoe' \(did you mean 'clean-clone'\?\)/);
    const option = await cli("run", "--stroy", "x.md");
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/Unknown option '--stroy'.*\(did you mean --story\?\)/);
    // Nothing near: no guess.
    expect((await cli("frobnicate")).stderr).not.toMatch(/did you mean/);
  });

  it("is installed as story-harness (harness is taken on the npm registry), with harness as an alias", () => {
    const { bin } = JSON.parse(readFileSync("package.json", "utf8")) as { bin: Record<string, string> };
    expect(bin).toEqual({ "story-harness": "bin/harness.js", harness: "bin/harness.js" });
  });
});
