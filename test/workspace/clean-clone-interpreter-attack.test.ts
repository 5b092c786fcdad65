/**
 * The attack of issue 30 (1): provisioning plants a script in the shared package cache and
 * `.github/harness.yml` names it as `clean_clone.interpreter`. The check asks the interpreter
 * its version; that probe used to run as the App, outside the sandbox, where the script wrote
 * wherever the App may write and read the App's `/proc/<pid>/environ`. The script here does
 * both and reports what it could do on its version line.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { runCleanCloneCheck, type CleanCloneOptions, type CleanCloneResult } from "../../src/workspace/index.js";
import { removeTemps, repoWith, temp, write } from "./clean-clone-fixtures.js";

afterAll(removeTemps);

/** The sandbox on, whatever the environment of the test run says. */
const sandbox = new Sandbox(sandboxSettingsFromEnv({}));

/** A script that writes `marker` and says whether it could read the App's environment. */
function evil(marker: string): string {
  return [
    "#!/bin/sh",
    // The redirection's own failure (the folder is not there in the sandbox) is silenced too: only the version line is output.
    `{ echo planted > '${marker}'; } 2>/dev/null`,
    `if cat /proc/${process.pid}/environ >/dev/null 2>&1; then seen=read; else seen=hidden; fi`,
    'echo "Python 3.99 environ:$seen"',
    "",
  ].join("\n");
}

function check(options: Omit<CleanCloneOptions, "scratchRoot" | "sandbox">): Promise<CleanCloneResult> {
  return runCleanCloneCheck({ links: [], ...options, scratchRoot: temp("cc-root-"), sandbox });
}

/** The package cache with the planted script, and a folder only the App can write for the marker. */
function planted(): { script: string; marker: string } {
  const cache = join(temp("cc-cache-"), "cache", "npm");
  mkdirSync(cache, { recursive: true });
  const marker = join(temp("cc-marker-"), "marker");
  write(cache, { "evil.sh": { content: evil(marker), mode: 0o755 } });
  return { script: join(cache, "evil.sh"), marker };
}

describe("clean_clone.interpreter is a program the repository names", () => {
  it("a relative path climbing out of the repository (as from the App's working directory) is refused, and nothing runs", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const { script, marker } = planted();
    // The path the attacker wrote: right when resolved against the App's working directory.
    const interpreter = relative(process.cwd(), script);
    expect(interpreter.startsWith("..")).toBe(true);
    const result = await check({ repo, command: "true", interpreter });
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ ran: false, interpreter });
    expect(result.reason).toMatch(/leaves the repository: clean_clone.interpreter, when relative, names a file inside the clone/);
  });

  it("an absolute path to the planted script, named by the repository, is refused: the sandbox does not show it, and nothing runs", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const { script, marker } = planted();
    const result = await check({ repo, command: "true", interpreter: script });
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ ran: false, interpreter: script });
    expect(result.reason).toMatch(/is not visible in the sandbox: clean_clone.interpreter .*HARNESS_SANDBOX_READ/);
  });

  it("the installation of a program the repository names is never shown: a secret beside it stays out of the suite's reach", async () => {
    // Without this rule, naming `<home>/.ssh/bin/x` made `<home>/.ssh` readable to the suite.
    const home = temp("cc-home-");
    write(home, { ".ssh/id_rsa": "PRIVATE KEY\n", ".ssh/bin/x": { content: "#!/bin/sh\necho x 1.0\n", mode: 0o755 } });
    const repo = await repoWith({ "a.txt": "a\n" });
    const result = await check({ repo, command: `cat '${join(home, ".ssh", "id_rsa")}'`, interpreter: join(home, ".ssh", "bin", "x") });
    expect(result.ran).toBe(false);
    expect(result.outputTail ?? "").not.toContain("PRIVATE KEY");
  });

  it("the same script named by the operator (the CLI's --interpreter) runs in the sandbox, writes nothing and reads nothing of the App", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const { script, marker } = planted();
    const result = await check({ repo, command: "true", interpreter: script, interpreterFromOperator: true });
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ ran: true, exitCode: 0, interpreter: script, interpreterVersion: "Python 3.99 environ:hidden" });
  });

  it("a program the operator shows every step (HARNESS_SANDBOX_READ) may be named by the repository", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const { script, marker } = planted();
    const shown = new Sandbox(sandboxSettingsFromEnv({ HARNESS_SANDBOX_READ: dirname(script) }));
    const result = await runCleanCloneCheck({ links: [], repo, command: "true", interpreter: script, scratchRoot: temp("cc-root-"), sandbox: shown });
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ ran: true, exitCode: 0, interpreter: script, interpreterVersion: "Python 3.99 environ:hidden" });
  });

  it("a relative path inside the repository is resolved in the clone and runs in the sandbox", async () => {
    const marker = join(temp("cc-marker-"), "marker");
    const repo = await repoWith({ "tools/py": { content: evil(marker), mode: 0o755 } });
    const result = await check({ repo, command: "true", interpreter: "tools/py" });
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ ran: true, exitCode: 0, interpreter: "tools/py", interpreterVersion: "Python 3.99 environ:hidden" });
  });
});
