/**
 * `harness clean-clone` builds the commit the user's own `git add -A && git commit` makes: the
 * ignore file and line endings of their global configuration count (a fixture their global
 * ignore file leaves out is left out of the check's commit too, so the check fails as CI will),
 * the repository's own configuration still wins over them, and nothing else of the global
 * configuration (a filter driver that runs a program) reaches the App's git.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "cc-user-config-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;

/** A user with a home of their own (and optionally an XDG config folder), and a repository with one commit. */
async function userAndRepo(files: Record<string, string>): Promise<{ home: string; repo: string }> {
  counter += 1;
  const home = join(root, `home-${counter}`);
  const repo = join(root, `repo-${counter}`);
  mkdirSync(home);
  mkdirSync(repo);
  await git(["init", "-q"], { cwd: repo });
  writeFileSync(join(repo, "README"), "base\n");
  await git(["add", "-A"], { cwd: repo });
  await git(["commit", "-q", "-m", "base"], { cwd: repo, env: HARNESS_IDENTITY });
  for (const [path, text] of Object.entries(files)) {
    const file = path.startsWith("~/") ? join(home, path.slice(2)) : join(repo, path);
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, text);
  }
  return { home, repo };
}

async function cleanClone(repo: string, env: NodeJS.ProcessEnv, command: string): Promise<{ code: number; result: Record<string, unknown> }> {
  const { code, stdout } = await runCli(["clean-clone", "--command", command, "--timeout-ms", "60000"], repo, env);
  return { code, result: JSON.parse(stdout) as Record<string, unknown> };
}

/** What the user's own git stages, with their HOME (their global config), listed by path. */
async function userStages(repo: string, env: Record<string, string>): Promise<string> {
  return git(["add", "-A", "--dry-run"], { cwd: repo, env: { ...env, GIT_CONFIG_GLOBAL: join(env.HOME ?? "", ".gitconfig") } });
}

describe("the user's global git configuration in harness clean-clone", () => {
  it("leaves out what the user's core.excludesFile ignores, so the check fails as CI will", async () => {
    const { home, repo } = await userAndRepo({
      "~/.gitconfig": "[core]\n\texcludesFile = ~/.gitignore_global\n",
      "~/.gitignore_global": "fixture.json\n",
      "fixture.json": '{"needed": true}\n',
    });
    // The user's own `git add -A` leaves the fixture out.
    expect(await userStages(repo, { HOME: home })).not.toMatch(/fixture\.json/);
    const run = await cleanClone(repo, { ...process.env, HOME: home }, "cat fixture.json");
    expect(run.code).toBe(1);
    expect(run.result).toMatchObject({ ran: true });
    expect(run.result.exitCode).not.toBe(0);
  });

  it("honours git's default ignore file under XDG_CONFIG_HOME", async () => {
    const { home, repo } = await userAndRepo({ "~/xdg/git/ignore": "fixture.json\n", "fixture.json": "{}\n" });
    const run = await cleanClone(repo, { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "xdg") }, "cat fixture.json");
    expect(run.code).toBe(1);
    // A control: without that ignore file the fixture is in the commit, and the suite passes.
    const control = await cleanClone(repo, { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "elsewhere") }, "cat fixture.json");
    expect(control.code).toBe(0);
  });

  it("converts line endings as the user's core.autocrlf does, unless the repository's own config says otherwise", async () => {
    const noCr = `! grep -q "$(printf '\\r')" crlf.txt`;
    const { home, repo } = await userAndRepo({ "~/.gitconfig": "[core]\n\tautocrlf = true\n", "crlf.txt": "one\r\ntwo\r\n" });
    expect((await cleanClone(repo, { ...process.env, HOME: home }, noCr)).code).toBe(0);
    await git(["config", "core.autocrlf", "false"], { cwd: repo });
    expect((await cleanClone(repo, { ...process.env, HOME: home }, noCr)).code).toBe(1);
  });

  it("takes nothing else from it: a global filter driver never runs", async () => {
    const marker = join(root, "filter-ran");
    const { home, repo } = await userAndRepo({
      "~/.gitconfig": `[core]\n\tattributesFile = ~/.gitattributes\n[filter "evil"]\n\tclean = touch ${marker} && cat\n`,
      "~/.gitattributes": "*.txt filter=evil\n",
      ".gitattributes": "*.txt filter=evil\n",
      "new.txt": "content\n",
    });
    const run = await cleanClone(repo, { ...process.env, HOME: home }, "cat new.txt");
    expect(run.code).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});
