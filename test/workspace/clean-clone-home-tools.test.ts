/**
 * Tools under the user's home on PATH (pyenv, nvm, `~/.local/bin`): the sandbox shows the system
 * folders only, so the program a step's command names is resolved on the host and its
 * installation shown read-only, or the step is refused up front naming HARNESS_SANDBOX_READ.
 * The private home lives in this checkout's cache folder, as a user's home is outside the OS
 * temporary folder (which the sandbox hides from steps).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { etcSecretMasks, Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { cleanCloneExitCode, runCleanCloneCheck, type CleanCloneOptions, type CleanCloneResult } from "../../src/workspace/index.js";
import { removeTemps, repoWith, temp, write } from "./clean-clone-fixtures.js";

const HOMES = resolve("node_modules", ".cache", "harness-home-tools");
let home = "";
let sandbox: Sandbox;

beforeAll(() => {
  mkdirSync(HOMES, { recursive: true });
  home = mkdtempSync(join(HOMES, "home-"));
  write(home, {
    ".local/bin/suite-tool": { content: '#!/bin/sh\necho "private tool ran"\nls "$(dirname "$0")/../../.ssh" 2>/dev/null || echo "no secrets"\n', mode: 0o755 },
    ".local/share/keyrings/login.keyring": "secret\n",
    ".ssh/id_ed25519": "secret\n",
    ".pyenv/versions/3.99/bin/python3": {
      content: '#!/bin/sh\nif [ "$1" = --version ]; then echo "Python 3.99.0"; exit 0; fi\necho "private python" >&2\nexec /usr/bin/python3 "$@"\n',
      mode: 0o755,
    },
    "bin/home-tool": { content: "#!/bin/sh\necho home tool\n", mode: 0o755 },
  });
  // The App's own folder (this checkout) is not masked here: the private home stands in for a user's, outside it.
  sandbox = new Sandbox(sandboxSettingsFromEnv({}), { masked: etcSecretMasks(), home });
});
afterAll(() => {
  removeTemps();
  rmSync(home, { recursive: true, force: true });
});

async function check(options: Omit<CleanCloneOptions, "sandbox" | "repo">): Promise<CleanCloneResult> {
  const repo = await repoWith({ "a.txt": "a\n", "run.sh": { content: "#!/bin/sh\necho run\n", mode: 0o755 }, ".gitignore": "left-out.sh\n" });
  write(repo, { "left-out.sh": { content: "#!/bin/sh\necho left out\n", mode: 0o755 } });
  return runCleanCloneCheck({ links: [], sandbox, repo, scratchRoot: temp("cc-home-root-"), ...options });
}

describe("a tool under the user's home on PATH", () => {
  it("runs: ~/.local/bin is shown read-only (with ~/.local/lib), never the rest of the home", async () => {
    const result = await check({ command: "suite-tool", env: { set: { PATH: `${join(home, ".local/bin")}:/usr/bin:/bin` } } });
    expect(result).toMatchObject({ ran: true, exitCode: 0 });
    expect(result.outputTail).toBe("private tool ran\nno secrets");
    expect(sandbox.canRun(join(home, ".local/bin/suite-tool"))).toBe(true);
  });

  it("the result names the interpreter that really ran, with its version, found under the home on PATH", async () => {
    const python = join(home, ".pyenv/versions/3.99/bin/python3");
    const result = await check({ command: "python3 -c \"print('ran')\"", env: { set: { PATH: `${join(home, ".pyenv/versions/3.99/bin")}:/usr/bin:/bin` } } });
    expect(result).toMatchObject({ ran: true, exitCode: 0, interpreter: python, interpreterVersion: "Python 3.99.0" });
    expect(result.outputTail).toBe("private python\nran");
    expect(result.warnings).toBeUndefined();
  });

  it("a tool whose installation is the home itself is refused up front, naming HARNESS_SANDBOX_READ: could not run (exit 2)", async () => {
    const result = await check({ command: "home-tool", env: { set: { PATH: `${join(home, "bin")}:/usr/bin:/bin` } } });
    expect(result.ran).toBe(false);
    expect(result.reason).toContain(`${join(home, "bin/home-tool")} is not visible in the sandbox, and ${home} is the user's home or holds it`);
    expect(result.reason).toContain("HARNESS_SANDBOX_READ");
    expect(cleanCloneExitCode(result)).toBe(2);
    expect(sandbox.canRun(join(home, "bin/home-tool"))).toBe(false);
  });
});

describe("exit 127 in the clean clone", () => {
  it("is 'could not run' (exit 2) when a program is not found, naming the shell's words", async () => {
    const result = await check({ command: "no-such-tool-anywhere --run" });
    expect(result).toMatchObject({ ran: false });
    expect(result.reason).toMatch(/^the suite could not be run: exit 127, .*no-such-tool-anywhere: not found: .*HARNESS_SANDBOX_READ/);
    expect(cleanCloneExitCode(result)).toBe(2);
  });

  it("is the change's failure (exit 1) when the missing file is the commit's own", async () => {
    const result = await check({ command: "./run.sh && ./left-out.sh" });
    expect(result).toMatchObject({ ran: true, exitCode: 127 });
    expect(result.outputTail).toMatch(/\.\/left-out\.sh: not found$/);
    expect(cleanCloneExitCode(result)).toBe(1);
  });
});
