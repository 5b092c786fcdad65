/**
 * The clean-clone check's file-system parts on real temporary folders, without building a
 * clone: linking dependency roots and refusing the ones that lead back into the target, finding
 * what a command invokes, resolving and asking an interpreter, and the scratch folder's life.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { exec, selfIdentity, type ExecResult } from "../../src/exec/index.js";
import { CleanCloneBuildError, InterpreterError } from "../../src/workspace/index.js";
import { linkDependencyRoots } from "../../src/workspace/clean-clone/links.js";
import { pointsBackIntoTarget } from "../../src/workspace/clean-clone/links-back.js";
import { invokedInterpreter, sameFile } from "../../src/workspace/clean-clone/invoked.js";
import { interpreterVersion, isExecutableFile, resolveInterpreter } from "../../src/workspace/clean-clone/interpreter.js";
import { makeScratch, reapScratch, removeScratch } from "../../src/workspace/clean-clone/scratch.js";
import { removeTemps, temp, write } from "./clean-clone-fixtures.js";

afterAll(removeTemps);

const script = (body: string) => ({ content: `#!/bin/sh\n${body}\n`, mode: 0o755 });

describe("linkDependencyRoots", () => {
  it("links each root the target has and the clone lacks, and excludes exactly those in the clone", async () => {
    const top = temp("cc-top-");
    const clone = temp("cc-clone-");
    write(top, { "node_modules/dep/i.js": "1\n", "vendor/bundle/gem.rb": "g\n", "vendor/other.txt": "o\n", "tracked/x": "t\n" });
    write(clone, { "tracked/x": "t\n", ".git/info/exclude": "# kept\n" });
    const { linked } = await linkDependencyRoots(top, clone, ["node_modules//", "vendor/bundle", "vendor", "absent", "tracked"], "/the/repo");
    expect(linked).toEqual(["node_modules", "vendor/bundle"]);
    // node_modules is a layer of the clone's own: a folder of links to the user's packages (shadow.ts).
    expect(lstatSync(join(clone, "node_modules")).isDirectory()).toBe(true);
    expect(readlinkSync(join(clone, "node_modules", "dep"))).toBe(join(top, "node_modules", "dep"));
    expect(readlinkSync(join(clone, "vendor", "bundle"))).toBe(join(top, "vendor", "bundle"));
    expect(lstatSync(join(clone, "vendor")).isDirectory()).toBe(true);
    expect(lstatSync(join(clone, "tracked")).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(clone, ".git/info/exclude"), "utf8")).toBe("# kept\n\n# linked by the clean-clone check\n/node_modules\n/vendor/bundle\n");
  });

  it("gives node_modules a layer of the clone's own: new entries land in the clone, tool caches start empty", async () => {
    const top = temp("cc-top-");
    write(top, {
      "node_modules/dep/i.js": "1\n",
      "node_modules/@s/p/i.js": "2\n",
      "node_modules/.bin/x": "x\n",
      "node_modules/.cache/babel/old": "o\n",
      "node_modules/.vite/vitest/results.json": "{}\n",
    });
    const clone = temp("cc-clone-");
    expect((await linkDependencyRoots(top, clone, ["node_modules"], "/r")).linked).toEqual(["node_modules"]);
    expect(readdirSync(join(clone, "node_modules")).sort()).toEqual([".bin", "@s", "dep"]);
    expect(readFileSync(join(clone, "node_modules", "@s", "p", "i.js"), "utf8")).toBe("2\n");
    write(clone, { "node_modules/.vite-temp/config.mjs": "c\n" });
    expect(existsSync(join(top, "node_modules", ".vite-temp"))).toBe(false);
  });

  it("makes the exclude file when the clone has none, and writes nothing when nothing is linked", async () => {
    const top = temp("cc-top-");
    write(top, { ".venv/bin/python": "p\n" });
    const clone = temp("cc-clone-");
    expect((await linkDependencyRoots(top, clone, [".venv"], "/r")).linked).toEqual([".venv"]);
    expect(readFileSync(join(clone, ".git/info/exclude"), "utf8")).toBe("\n# linked by the clean-clone check\n/.venv\n");
    const bare = temp("cc-clone-");
    expect((await linkDependencyRoots(top, bare, ["node_modules"], "/r")).linked).toEqual([]);
    expect(readdirSync(bare)).toEqual([]);
  });

  it("turns a file-system failure into a build error of the link step", async () => {
    const top = temp("cc-top-");
    write(top, { "deps/inner/x": "x\n" });
    const clone = temp("cc-clone-");
    write(clone, { deps: "a file where a folder must go\n" });
    const error: unknown = await linkDependencyRoots(top, clone, ["deps/inner"], "/the/repo").catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(CleanCloneBuildError);
    expect(error).toMatchObject({ step: "link", repo: "/the/repo" });
    expect((error as CleanCloneBuildError).detail).toMatch(/EEXIST|ENOTDIR/);
  });

  it("refuses roots that lead back into the target, naming every one, after linking them", async () => {
    const top = temp("cc-top-");
    write(top, { "packages/a/index.js": "a\n", "packages/b/index.js": "b\n" });
    mkdirSync(join(top, "node_modules"));
    symlinkSync("../packages/a", join(top, "node_modules", "a"));
    mkdirSync(join(top, "bower_components"));
    symlinkSync("../packages/b", join(top, "bower_components", "b"));
    const clone = temp("cc-clone-");
    const error: unknown = await linkDependencyRoots(top, clone, ["node_modules", "bower_components"], "/the/repo").catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(CleanCloneBuildError);
    expect((error as CleanCloneBuildError).message).toBe(
      "clean clone of /the/repo could not be built (link): a linked folder leads back into the target, so the clean clone would import the target's uncommitted files: " +
        "node_modules/a is a symlink to packages/a in the target's own tree; bower_components/b is a symlink to packages/b in the target's own tree " +
        "(provision the clean clone afresh instead: clean_clone.provision: true in .github/harness.yml, or harness clean-clone --provision)",
    );
  });
});

describe("pointsBackIntoTarget", () => {
  it("names first- and scoped second-level symlinks into the target, and nothing else", async () => {
    const top = temp("cc-top-");
    const outside = temp("cc-outside-");
    write(top, { "src/x.js": "x\n", "..odd/y.js": "y\n", "node_modules/real/index.js": "r\n", "node_modules/plain/inner/f": "f\n" });
    const nm = join(top, "node_modules");
    symlinkSync("../src", join(nm, "to-src"));
    symlinkSync("..", join(nm, "to-top"));
    symlinkSync("../..odd", join(nm, "to-odd"));
    symlinkSync("real", join(nm, "inside-root"));
    symlinkSync(outside, join(nm, "outside"));
    mkdirSync(join(nm, "@scope"));
    symlinkSync("../../src", join(nm, "@scope", "pkg"));
    mkdirSync(join(nm, "@scope", "plain-dir"));
    symlinkSync("../../src", join(nm, "plain", "not-scanned"));
    const problems = await pointsBackIntoTarget(top, "node_modules");
    expect(problems.sort()).toEqual(
      [
        "node_modules/to-src is a symlink to src in the target's own tree",
        "node_modules/to-top is a symlink to . in the target's own tree",
        "node_modules/to-odd is a symlink to ..odd in the target's own tree",
        "node_modules/@scope/pkg is a symlink to src in the target's own tree",
      ].sort(),
    );
  });

  it("is empty for a root that is missing or a plain folder", async () => {
    const top = temp("cc-top-");
    write(top, { "node_modules/dep/index.js": "d\n" });
    expect(await pointsBackIntoTarget(top, "node_modules")).toEqual([]);
    expect(await pointsBackIntoTarget(top, ".venv")).toEqual([]);
  });

  it("names the editable-install records of every site-packages layout that point into the target", async () => {
    const top = temp("cc-top-");
    write(top, {
      ".venv/lib/python3.12/site-packages/__editable__.a-1.pth": `import x\n${top}/src/a\n`,
      ".venv/lib64/python3.12/site-packages/b.egg-link": `${top}/src/b\n.\n`,
      ".venv/lib/python3.11/site-packages/__editable___c_1_finder.py": `MAPPING = {'c': '${top}/src/c'}\n`,
      ".venv/lib/python3.12/site-packages/d-1.dist-info/direct_url.json": JSON.stringify({ url: `file://${top}/src/d%20e/`, dir_info: { editable: true } }),
      ".venv/lib/python3.12/site-packages/ok.pth": `${top}/.venv/lib/extra\n`,
      ".venv/lib/python3.12/site-packages/elsewhere.pth": "/opt/other/src\n",
      ".venv/lib/python3.12/site-packages/not-a-record.txt": `${top}/src/z\n`,
      ".venv/lib/python3.12/site-packages/__editable__.notes.txt": `${top}/src/z\n`,
      ".venv/lib/python3.12/site-packages/e-1.dist-info/RECORD": `${top}/src/z\n`,
      ".venv/lib/python3.12/site-packages/notes/direct_url.json": JSON.stringify({ url: `file://${top}/src/z` }),
    });
    mkdirSync(join(top, ".venv/lib/python3.12/site-packages/dir.pth"));
    const problems = await pointsBackIntoTarget(top, ".venv");
    expect(problems.sort()).toEqual(
      [
        ".venv/lib/python3.12/site-packages/__editable__.a-1.pth points at src/a in the target's own tree (an editable install)",
        ".venv/lib64/python3.12/site-packages/b.egg-link points at src/b in the target's own tree (an editable install)",
        ".venv/lib/python3.11/site-packages/__editable___c_1_finder.py points at src/c in the target's own tree (an editable install)",
        ".venv/lib/python3.12/site-packages/d-1.dist-info/direct_url.json points at src/d e in the target's own tree (an editable install)",
      ].sort(),
    );
    const pypackages = temp("cc-top-");
    write(pypackages, { "__pypackages__/3.12/lib/m.pth": `${pypackages}\n` });
    expect(await pointsBackIntoTarget(pypackages, "__pypackages__")).toEqual([
      "__pypackages__/3.12/lib/m.pth points at . in the target's own tree (an editable install)",
    ]);
  });

  it("walks no folder a symlink leads out of the linked folder to, and does follow one that stays inside", async () => {
    const top = temp("cc-top-");
    const outside = temp("cc-outside-");
    write(outside, { "python3.12/site-packages/__editable__.far.pth": `${top}/src/far\n` });
    write(top, { ".venv/lib/python3.12/site-packages/__editable__.near.pth": `${top}/src/near\n` });
    // A venv's usual lib64 -> lib stays inside; a lib64 leading elsewhere is not the linked folder's to vouch for.
    symlinkSync("lib", join(top, ".venv", "lib64"));
    expect(await pointsBackIntoTarget(top, ".venv")).toEqual([
      ".venv/lib/python3.12/site-packages/__editable__.near.pth points at src/near in the target's own tree (an editable install)",
      ".venv/lib64/python3.12/site-packages/__editable__.near.pth points at src/near in the target's own tree (an editable install)",
    ]);
    rmSync(join(top, ".venv", "lib64"));
    symlinkSync(outside, join(top, ".venv", "lib64"));
    expect(await pointsBackIntoTarget(top, ".venv")).toEqual([
      ".venv/lib/python3.12/site-packages/__editable__.near.pth points at src/near in the target's own tree (an editable install)",
    ]);
  });

  it("names one record once, by its first mention that leaks", async () => {
    const top = temp("cc-top-");
    write(top, { "venv/lib/python3.12/site-packages/two.pth": `${top}/venv/lib/x\n${top}/first\n${top}/second\n` });
    expect(await pointsBackIntoTarget(top, "venv")).toEqual([
      "venv/lib/python3.12/site-packages/two.pth points at first in the target's own tree (an editable install)",
    ]);
  });
});

describe("invokedInterpreter", () => {
  function fixture(): { cwd: string; bin: string } {
    const cwd = temp("cc-cwd-");
    const bin = temp("cc-bin-");
    write(bin, { python3: script("exit 0"), tool: script("exit 0"), "python-config": script("exit 0"), "not-exec-python": "x\n" });
    write(cwd, {
      ".venv/bin/python3.12": script("exit 0"),
      "run-spaced": { content: "#!  /usr/bin/env   python3\n", mode: 0o755 },
      "run-bare": { content: `#!${join(bin, "python3")}\n`, mode: 0o755 },
      "run-script-arg": { content: `#!${join(bin, "python3")} ./tool\n`, mode: 0o755 },
      "run-not-shebang": { content: "::/usr/bin/env python3\n", mode: 0o755 },
      "run-env": { content: "#!/usr/bin/env python3\nprint(1)\n", mode: 0o755 },
      "run-abs": { content: `#!${join(bin, "python3")} -u\n`, mode: 0o755 },
      "run-flag": { content: "#!/usr/bin/env -S python3\n", mode: 0o755 },
      "run-rel": { content: "#!python3\n", mode: 0o755 },
      "run-sh": script("echo shell"),
      "run-plain": { content: "no shebang\n", mode: 0o755 },
      "not-exec": "#!/usr/bin/env python3\n",
    });
    return { cwd, bin };
  }

  it("finds an interpreter named by path or on PATH, skipping relative PATH entries", async () => {
    const { cwd, bin } = fixture();
    const path = `relative/dir:${bin}`;
    expect(await invokedInterpreter(".venv/bin/python3.12 -m pytest", cwd, path)).toEqual({ path: join(cwd, ".venv/bin/python3.12"), byPath: true });
    expect(await invokedInterpreter("python3 -m pytest", cwd, path)).toEqual({ path: join(bin, "python3"), byPath: false });
    write(cwd, { "relative/dir/python3": script("exit 0") });
    expect(await invokedInterpreter("python3", cwd, `relative/dir:${bin}`)).toEqual({ path: join(bin, "python3"), byPath: false });
    expect(await invokedInterpreter("python3", cwd, "relative/dir")).toBeUndefined();
    // A relative entry is skipped even where it would resolve from the process's own folder.
    const fromHere = relative(process.cwd(), join(cwd, "relative/dir"));
    expect(await invokedInterpreter("python3", cwd, `${fromHere}:${bin}`)).toEqual({ path: join(bin, "python3"), byPath: false });
    // The first folder that has it executable wins; a folder without it is passed over.
    expect(await invokedInterpreter("python3", cwd, `${temp("cc-empty-bin-")}:${bin}`)).toEqual({ path: join(bin, "python3"), byPath: false });
  });

  it("follows a script's #! line, by env on PATH or by absolute path", async () => {
    const { cwd, bin } = fixture();
    expect(await invokedInterpreter("./run-env arg", cwd, bin)).toEqual({ path: join(bin, "python3"), byPath: true });
    expect(await invokedInterpreter("./run-abs", cwd, "")).toEqual({ path: join(bin, "python3"), byPath: true });
    expect(await invokedInterpreter("./run-bare", cwd, "")).toEqual({ path: join(bin, "python3"), byPath: true });
    // A first argument to a program that is not env is the program's own (here a script it runs).
    expect(await invokedInterpreter("./run-script-arg", cwd, bin)).toEqual({ path: join(bin, "python3"), byPath: true });
    expect(await invokedInterpreter("./run-spaced", cwd, bin)).toEqual({ path: join(bin, "python3"), byPath: true });
  });

  it.each([
    "./run-flag",
    "./run-rel",
    "./run-sh",
    "./run-plain",
    "./run-not-shebang",
    "./not-exec",
    "./missing",
    "tool",
    "python-config",
    "not-exec-python",
    "if true; then python3; fi",
    "$PY -m pytest",
  ])("knows no interpreter for %j", async (command) => {
    const { cwd, bin } = fixture();
    expect(await invokedInterpreter(command, cwd, bin)).toBeUndefined();
  });

  it("tells the same file through links", async () => {
    const dir = temp("cc-same-");
    write(dir, { real: "r\n", other: "o\n" });
    symlinkSync(join(dir, "real"), join(dir, "link"));
    expect(await sameFile(join(dir, "link"), join(dir, "real"))).toBe(true);
    expect(await sameFile(join(dir, "other"), join(dir, "real"))).toBe(false);
    expect(await sameFile(join(dir, "missing"), join(dir, "missing"))).toBe(true);
    expect(await sameFile(join(dir, "missing"), join(dir, "real"))).toBe(false);
  });
});

describe("the targeted interpreter", () => {
  it("is an executable regular file", async () => {
    const dir = temp("cc-exe-");
    write(dir, { exe: script("exit 0"), plain: "x\n" });
    mkdirSync(join(dir, "folder"));
    expect(await isExecutableFile(join(dir, "exe"))).toBe(true);
    expect(await isExecutableFile(join(dir, "plain"))).toBe(false);
    expect(await isExecutableFile(join(dir, "folder"))).toBe(false);
    expect(await isExecutableFile(join(dir, "missing"))).toBe(false);
  });

  it("is resolved by name on PATH (absolute entries only, first match) or as a path from cwd", async () => {
    const cwd = temp("cc-cwd-");
    const first = temp("cc-bin-");
    const second = temp("cc-bin-");
    write(first, { "python3.99": "not executable\n" });
    write(second, { "python3.99": script("exit 0") });
    write(cwd, { "rel/python3.99": script("exit 0"), "local/py": script("exit 0") });
    expect(await resolveInterpreter("python3.99", cwd, `rel:${first}:${second}`)).toBe(join(second, "python3.99"));
    const fromHere = relative(process.cwd(), join(cwd, "rel"));
    expect(await resolveInterpreter("python3.99", cwd, `${fromHere}:${second}`)).toBe(join(second, "python3.99"));
    // Without a search path given, the process's PATH is searched.
    expect(await resolveInterpreter("sh", cwd)).toMatch(/^\/.*\/sh$/);
    await expect(resolveInterpreter("python3.99", cwd, "rel")).rejects.toThrow(new InterpreterError("python3.99", "was not found on PATH"));
    expect(await resolveInterpreter("local/py", cwd, "")).toBe(join(cwd, "local/py"));
    const missing = await resolveInterpreter("./nope", cwd, second).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(InterpreterError);
    expect(missing).toMatchObject({
      name: "InterpreterError",
      failureClass: "clean-clone-interpreter",
      interpreter: join(cwd, "nope"),
      detail: "is not an executable file",
      message: `interpreter ${join(cwd, "nope")} is not an executable file`,
    });
  });

  it("refuses a relative path that leaves the root it is resolved in, before looking at the file", async () => {
    const root = temp("cc-root-");
    const outside = temp("cc-outside-");
    write(outside, { "evil.sh": script("exit 0") });
    write(root, { "sub/py": script("exit 0") });
    const escape = relative(join(root, "sub"), join(outside, "evil.sh"));
    await expect(resolveInterpreter(escape, join(root, "sub"), "", root)).rejects.toThrow(
      /leaves the repository: clean_clone.interpreter, when relative, names a file inside the clone/,
    );
    await expect(resolveInterpreter("../x", root, "", root)).rejects.toThrow(/leaves the repository/);
    expect(await resolveInterpreter("../sub/py", join(root, "sub"), "", root)).toBe(join(root, "sub", "py"));
    // An absolute path is the operator's or the repository's choice of a program on this machine: it runs in the sandbox.
    expect(await resolveInterpreter(join(outside, "evil.sh"), root, "", root)).toBe(join(outside, "evil.sh"));
  });

  /** The probe's launcher (the check passes the sandbox; the parsing is what is tested here). */
  const runIn =
    (cwd: string) =>
    (argv: readonly string[], bounds: { timeoutMs: number; tailLines: number; tailBytes: number }): Promise<ExecResult> =>
      exec(argv, { cwd, ...bounds });

  it("reports its version's last line, on stdout or stderr", async () => {
    const dir = temp("cc-ver-");
    const asked = (body: string) => script(`[ "$1" = --version ] || exit 2\n${body}`);
    write(dir, {
      out: asked('echo "banner"; echo "  Python 3.99.2  "'),
      err: asked('echo "Python 2.7.18" >&2'),
      blank: asked('echo "Python 3.99.3"; echo "   "'),
      where: asked('echo "$PWD"'),
      fails: script("exit 3"),
      killed: script("kill -9 $$"),
    });
    expect(await interpreterVersion(join(dir, "out"), runIn(dir))).toBe("Python 3.99.2");
    expect(await interpreterVersion(join(dir, "blank"), runIn(dir))).toBe("Python 3.99.3");
    const elsewhere = temp("cc-ver-cwd-");
    expect(await interpreterVersion(join(dir, "where"), runIn(elsewhere))).toBe(elsewhere);
    expect(await interpreterVersion(join(dir, "err"), runIn(dir))).toBe("Python 2.7.18");
    await expect(interpreterVersion(join(dir, "fails"), runIn(dir))).rejects.toThrow(
      new InterpreterError(join(dir, "fails"), "could not report its version (--version exited 3)"),
    );
    await expect(interpreterVersion(join(dir, "killed"), runIn(dir))).rejects.toThrow(
      new InterpreterError(join(dir, "killed"), "could not report its version (--version exited SIGKILL)"),
    );
  });

  it("keeps at most 256 bytes of a long version line", async () => {
    const dir = temp("cc-ver-");
    write(dir, { long: script(`echo "${"v".repeat(300)}"`) });
    expect(await interpreterVersion(join(dir, "long"), runIn(dir))).toBe("v".repeat(256));
  });
});

describe("the scratch folder", () => {
  it("is made fresh under the root with its owner recorded beside it, and removed with the record", async () => {
    const root = temp("cc-scratch-root-");
    const dir = await makeScratch(root);
    expect(dir.startsWith(join(root, "harness-clean-clone-"))).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
    const me = selfIdentity();
    expect(JSON.parse(readFileSync(`${dir}.owner`, "utf8"))).toEqual({ pid: me.pid, startTime: me.startTime });
    write(dir, { "clone/deep/file": "x\n" });
    symlinkSync(root, join(dir, "clone", "link-out"));
    await removeScratch(dir);
    expect(readdirSync(root)).toEqual([]);
    // Removing is idempotent, and a scratch whose owner record was never written is removed too.
    await removeScratch(dir);
    mkdirSync(join(root, "harness-clean-clone-unowned"));
    await removeScratch(join(root, "harness-clean-clone-unowned"));
    expect(readdirSync(root)).toEqual([]);
  });

  it("is reaped when its owner is dead or unreadable, kept while its owner runs, and other names are left alone", async () => {
    const root = temp("cc-scratch-root-");
    const me = selfIdentity();
    const mine = await makeScratch(root);
    const owners: Record<string, string> = {
      dead: JSON.stringify({ pid: 1, startTime: "not-pid-1s-start" }),
      torn: "{",
      null: "null",
      nopid: JSON.stringify({ startTime: me.startTime }),
      stringpid: JSON.stringify({ pid: String(me.pid), startTime: me.startTime }),
      nostart: JSON.stringify({ pid: me.pid }),
    };
    for (const [name, owner] of Object.entries(owners)) {
      mkdirSync(join(root, `harness-clean-clone-${name}`, "clone"), { recursive: true });
      writeFileSync(join(root, `harness-clean-clone-${name}.owner`), owner);
    }
    mkdirSync(join(root, "other-folder"));
    writeFileSync(join(root, "other-folder.owner"), "{");
    writeFileSync(join(root, "harness-clean-clone-no-owner-suffix"), "x");
    const removed = await reapScratch(root);
    expect(removed.sort()).toEqual(
      Object.keys(owners)
        .map((name) => join(root, `harness-clean-clone-${name}`))
        .sort(),
    );
    expect(readdirSync(root).sort()).toEqual(
      [mine.slice(root.length + 1), `${mine.slice(root.length + 1)}.owner`, "harness-clean-clone-no-owner-suffix", "other-folder", "other-folder.owner"].sort(),
    );
    expect(existsSync(mine)).toBe(true);
    expect(await reapScratch(join(root, "missing"))).toEqual([]);
  });
});
