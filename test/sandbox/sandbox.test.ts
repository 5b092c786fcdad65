import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { git } from "../../src/workspace/index.js";
import {
  bwrapArgs,
  etcSecretMasks,
  probeSandbox,
  removeStaleScratch,
  Sandbox,
  scratchRemoved,
  sandboxSettingsFromEnv,
  type SandboxSettings,
} from "../../src/sandbox/index.js";
import { initRepo, makeTempDir, processWithTag, removeTempDirs, writeFiles } from "../support/tmp.js";
import { until } from "../support/poll.js";

afterAll(removeTempDirs);

const settings = (overrides: Partial<SandboxSettings> = {}): SandboxSettings => ({ ...sandboxSettingsFromEnv({}), ...overrides });
const sandbox = (overrides: Partial<SandboxSettings> = {}): Sandbox => new Sandbox(settings(overrides));

/** Runs `script` with `sh -c` in a sandboxed step writing `dir`; stdout and the exit code. */
async function inSandbox(
  dir: string,
  script: string,
  options: { network?: boolean; box?: Sandbox; readable?: string[] } = {},
): Promise<{ out: string; code: number | null }> {
  const result = await (options.box ?? sandbox()).shell(
    script,
    { cwd: dir, captureStdout: true, timeoutMs: 60_000 },
    {
      purpose: "suite",
      network: options.network ?? false,
      writable: [dir],
      ...(options.readable ? { readable: options.readable } : {}),
    },
  );
  return { out: result.stdout?.toString() ?? "", code: result.exitCode };
}

describe("sandbox settings", () => {
  it("is on by default and off only when HARNESS_SANDBOX says so", () => {
    expect(sandboxSettingsFromEnv({})).toMatchObject({ enabled: true, readPaths: [], writePaths: [], logCapBytes: 64 * 1024 * 1024 });
    expect(sandboxSettingsFromEnv({ HARNESS_SANDBOX: "off" }).enabled).toBe(false);
    expect(sandboxSettingsFromEnv({ HARNESS_SANDBOX: "on", HARNESS_SANDBOX_READ: "/opt/agents:/srv/tools" }).readPaths).toEqual(["/opt/agents", "/srv/tools"]);
  });

  it("names the variable a bad value is in", () => {
    expect(() => sandboxSettingsFromEnv({ HARNESS_SANDBOX: "maybe" })).toThrow(/HARNESS_SANDBOX="maybe" must be 'on' or 'off'/);
    expect(() => sandboxSettingsFromEnv({ HARNESS_SANDBOX_READ: "relative/path" })).toThrow(/HARNESS_SANDBOX_READ.*relative\/path is not absolute/);
    expect(() => sandboxSettingsFromEnv({ HARNESS_SANDBOX_MAX_PROCESSES: "-3" })).toThrow(/HARNESS_SANDBOX_MAX_PROCESSES="-3" must be a positive integer/);
  });
});

describe("bwrapArgs", () => {
  const view = {
    cwd: "/w/tree",
    home: "/s/home",
    tmp: "/s/tmp",
    writable: ["/w/tree", "/w/home/worktrees/a"],
    readable: ["/w/home/repos/x"],
    masked: [
      { path: "/w/home", directory: true },
      { path: "/etc/shadow", directory: false },
    ],
    network: false,
    system: [
      { kind: "ro-bind" as const, path: "/usr" },
      { kind: "symlink" as const, path: "/bin", target: "usr/bin" },
    ],
  };

  it("isolates every namespace, drops the network unless asked, and ends with the command separator", () => {
    const args = bwrapArgs(view);
    for (const flag of ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--die-with-parent", "--new-session"])
      expect(args).toContain(flag);
    expect(args.slice(args.indexOf("--uid"), args.indexOf("--uid") + 4)).toEqual(["--uid", "1000", "--gid", "1000"]);
    expect(bwrapArgs({ ...view, network: true })).not.toContain("--unshare-net");
    expect(args.at(-1)).toBe("--");
    expect(args.slice(-3, -1)).toEqual(["--chdir", "/w/tree"]);
  });

  it("mounts a masked folder before the step's own folders inside it", () => {
    const args = bwrapArgs(view).join(" ");
    expect(args).toContain("--tmpfs /w/home");
    expect(args.indexOf("--tmpfs /w/home")).toBeLessThan(args.indexOf("--bind /w/home/worktrees/a /w/home/worktrees/a"));
    expect(args.indexOf("--tmpfs /w/home")).toBeLessThan(args.indexOf("--ro-bind /w/home/repos/x /w/home/repos/x"));
    expect(args).toContain("--ro-bind /dev/null /etc/shadow");
    expect(args).toContain("--symlink usr/bin /bin");
  });
});

describe("what a sandboxed step sees", () => {
  it("an operator's folder inside the App's own (masked) folder is shown and its program runs; the App's folder around it stays hidden", async () => {
    // Where the suite installs the real agent CLIs: under the App's folder, granted through HARNESS_SANDBOX_READ.
    const granted = join(process.cwd(), "node_modules", ".cache", `harness-sees-${process.pid}`);
    mkdirSync(granted, { recursive: true });
    try {
      writeFileSync(join(granted, "tool"), "#!/bin/sh\necho granted-tool-ran\n", { mode: 0o755 });
      const box = sandbox({ readPaths: [granted] });
      expect(box.sees(join(granted, "tool"))).toBe(true);
      expect(box.canRun(join(granted, "tool"))).toBe(true);
      expect(box.sees(join(process.cwd(), "package.json"))).toBe(false);
      const dir = makeTempDir("harness-sees-");
      expect(
        await inSandbox(dir, `${join(granted, "tool")}; test -e ${join(process.cwd(), "package.json")} && echo app-seen || echo app-hidden`, { box }),
      ).toEqual({
        out: "granted-tool-ran\napp-hidden\n",
        code: 0,
      });
    } finally {
      rmSync(granted, { recursive: true, force: true });
    }
  });
});

describe("a sandboxed step", () => {
  it("runs as an unprivileged user that sees only its own processes, a private HOME and read-only system folders", async () => {
    const dir = makeTempDir();
    const outside = makeTempDir("harness-secret-");
    writeFileSync(join(outside, "secret.txt"), "top secret\n");
    const { out, code } = await inSandbox(
      dir,
      [
        "id -u",
        "ls /proc | grep -c '^[0-9]'",
        `test -e /proc/${process.pid} && echo app-visible || echo app-hidden`,
        'echo "home=$HOME"',
        'ls -A "$HOME" | wc -l',
        `cat ${outside}/secret.txt 2>/dev/null || echo secret-hidden`,
        "touch /usr/harness-probe 2>/dev/null && echo usr-writable || echo usr-read-only",
        "echo made > here.txt",
      ].join("\n"),
    );
    expect(code).toBe(0);
    const lines = out.trim().split("\n");
    expect(lines[0]).toBe("1000");
    expect(Number(lines[1])).toBeLessThan(10);
    expect(lines[2]).toBe("app-hidden");
    expect(lines[3]).not.toBe(`home=${process.env.HOME ?? ""}`);
    expect(lines[4]).toBe("0");
    expect(lines[5]).toBe("secret-hidden");
    expect(lines[6]).toBe("usr-read-only");
    // What the step wrote in its folder belongs to the App outside.
    expect(statSync(join(dir, "here.txt")).uid).toBe(process.getuid?.());
  });

  it("cannot read the host's secret files of /etc, though the App runs as root and /etc is visible", async () => {
    // The attack: with the App as root the sandbox user is root's uid outside, so a readable copy of a secret is a leak.
    const secrets = ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd"].filter((path) => existsSync(path));
    expect(secrets).toContain("/etc/shadow-");
    expect(readFileSync("/etc/shadow-", "utf8").length).toBeGreaterThan(0);
    const { out } = await inSandbox(makeTempDir(), secrets.map((path) => `printf '%s %s\\n' ${path} "$(cat ${path} 2>/dev/null | wc -c)"`).join("; "));
    for (const path of secrets) expect(out).toContain(`${path} 0\n`);
    expect(out.split("\n").filter((line) => line !== "")).toHaveLength(secrets.length);
  });

  it("gets a fresh HOME every time, so a profile written by one step is not read by the next login shell", async () => {
    const dir = makeTempDir();
    const box = sandbox();
    await inSandbox(dir, 'echo "echo POISONED" >> "$HOME/.profile"; echo "[url \\"x\\"]" >> "$HOME/.gitconfig"', { box });
    const second = await box.shell("echo clean", { cwd: dir, captureStdout: true }, { purpose: "provision", network: false, writable: [dir] }, { login: true });
    expect(second.stdout?.toString()).toBe("clean\n");
  });

  it("has no network unless the step has it: a loopback server of the host is out of reach", async () => {
    const dir = makeTempDir();
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections += 1;
      socket.on("error", () => undefined); // the probe exits as soon as it connected
      socket.end("hello\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const probe = `node -e 'require("net").connect(${port}, "127.0.0.1").on("connect", () => { console.log("reached"); process.exit(0) }).on("error", (e) => { console.log("refused " + e.code); process.exit(0) })'`;
    try {
      const off = await inSandbox(dir, probe);
      expect(off.out).toMatch(/^refused /);
      expect(connections).toBe(0);
      // A networked step has a namespace of its own (test/sandbox/network.test.ts); only the operator's opt-out shares the host's.
      const on = await inSandbox(dir, probe, { network: true, box: new Sandbox(settings({ net: { mode: "host", allow: [], egressAllow: [] } })) });
      expect(on.out).toBe("reached\n");
      expect(connections).toBe(1);
    } finally {
      server.close();
    }
  });

  it("leaves no process behind, a setsid daemon included", async () => {
    const dir = makeTempDir();
    const tag = `harness-daemon-${process.pid}-${Date.now()}`;
    const { code } = await inSandbox(dir, `setsid sh -c 'sleep 120; : ${tag}' > /dev/null 2>&1 < /dev/null & sleep 0.2; echo started`);
    expect(code).toBe(0);
    await until("the tagged process to end", () => !processWithTag(tag), 5000);
  });

  it("limits how many processes a step may run", async () => {
    const dir = makeTempDir();
    const { out } = await inSandbox(dir, "n=0; for i in $(seq 300); do sleep 5 2>/dev/null & n=$((n+1)); done 2>/dev/null; ls /proc | grep -c '^[0-9]'", {
      box: sandbox({ maxProcesses: 64 }),
    });
    expect(Number(out.trim())).toBeLessThanOrEqual(64);
  });

  it("limits the data memory of a process", async () => {
    const dir = makeTempDir();
    const { out } = await inSandbox(
      dir,
      `node -e 'try { const b = Buffer.alloc(1024 * 1024 * 1024, 1); console.log("allocated " + b.length) } catch (e) { console.log("refused") }' 2>&1 | tail -1`,
      {
        box: sandbox({ memoryBytes: 512 * 1024 * 1024 }),
      },
    );
    expect(out.trim()).not.toMatch(/^allocated/);
  });

  // With a pids cgroup (the App is root) the cgroup's entry shell sets these limits; without one, prlimit does.
  it.each([true, false])("sets the data limit it was given and forbids core files, for every process of the step (pids cgroup: %s)", async (pidsCgroups) => {
    const dir = makeTempDir();
    const box = new Sandbox(settings({ memoryBytes: 300 * 1024 * 1024 }), { pidsCgroups });
    const { out } = await inSandbox(dir, "ulimit -d; ulimit -c; sh -c 'ulimit -d; ulimit -c'", { box });
    expect(out).toBe(`${300 * 1024}\n0\n${300 * 1024}\n0\n`);
  });

  it("reads the git state of a linked worktree, cannot change it, and cannot repoint the App's .git link", async () => {
    const root = makeTempDir();
    const repo = join(root, "repo");
    await initRepo(repo, { "README.md": "# r\n" });
    const worktree = join(root, "wt");
    await git(["worktree", "add", "-q", "-b", "work", worktree], { cwd: repo });
    const link = readFileSync(join(worktree, ".git"), "utf8");
    const { out } = await inSandbox(
      worktree,
      [
        "git show HEAD:README.md",
        "git config remote.origin.pushurl http://evil.invalid/ 2>/dev/null && echo config-written || echo config-refused",
        "git update-ref refs/replace/abc HEAD 2>/dev/null && echo ref-written || echo ref-refused",
        "mkdir -p evil && printf 'gitdir: %s/evil\\n' \"$PWD\" > .git && echo link-rewritten",
      ].join("\n"),
    );
    expect(out).toBe("# r\nconfig-refused\nref-refused\nlink-rewritten\n");
    expect(readFileSync(join(worktree, ".git"), "utf8")).toBe(link);
    expect(await git(["config", "--get-regexp", "pushurl"], { cwd: repo }).catch(() => "")).toBe("");
  });

  it("caps a step's log, keeping its head and its tail and saying it was cut", async () => {
    const dir = makeTempDir();
    const logPath = join(makeTempDir(), "step.log");
    const box = sandbox({ logCapBytes: 1024 * 1024 });
    const result = await box.shell(
      "echo FIRST-LINE; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo LAST-LINE",
      { cwd: dir, logPath },
      { purpose: "suite", network: false, writable: [dir] },
    );
    expect(result.exitCode).toBe(0);
    const log = readFileSync(logPath, "latin1");
    expect(log.length).toBeLessThan(1024 * 1024 + 512);
    expect(log.startsWith("FIRST-LINE\n")).toBe(true);
    expect(log.trimEnd().endsWith("LAST-LINE")).toBe(true);
    expect(log).toMatch(/\[harness: log cut: \d+ of 50000\d\d bytes left out here/);
    expect(result.tail).toContain("LAST-LINE");
  });

  it("with HARNESS_SANDBOX=off runs unsandboxed but still with a private HOME, and says so", async () => {
    const dir = makeTempDir();
    const result = await sandbox({ enabled: false }).shell(
      'echo "$HOME"',
      { cwd: dir, captureStdout: true },
      { purpose: "suite", network: false, writable: [dir] },
    );
    expect(result).toMatchObject({ exitCode: 0, sandboxed: false, network: true });
    expect(result.stdout?.toString().trim()).not.toBe(process.env.HOME);
  });
});

describe("probeSandbox", () => {
  it("is on where bubblewrap works, off when the operator switched it off", async () => {
    await expect(probeSandbox(sandbox())).resolves.toEqual({ state: "on" });
    await expect(probeSandbox(sandbox({ enabled: false }))).resolves.toEqual({ state: "off" });
  });

  it("names the fix when bubblewrap is missing or cannot make its namespaces", async () => {
    const missing = await probeSandbox(new Sandbox(settings(), { bwrap: "/nonexistent/bwrap" }));
    expect(missing).toMatchObject({ state: "unavailable" });
    expect(missing.state === "unavailable" && missing.reason).toMatch(/apt-get install -y bubblewrap.*HARNESS_SANDBOX=off/);

    const dir = makeTempDir();
    writeFiles(dir, { bwrap: { content: "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n", mode: 0o755 } });
    const refused = await probeSandbox(new Sandbox(settings(), { bwrap: join(dir, "bwrap"), pidsCgroups: false }));
    expect(refused.state === "unavailable" && refused.reason).toMatch(/uid map: Permission denied.*user namespaces/);
    expect(existsSync(join(dir, "bwrap"))).toBe(true);
  });
});

describe("a step's scratch folder", () => {
  it("is made fresh for the step and removed after it, even with folders the step made unwritable", async () => {
    const root = makeTempDir();
    const dir = makeTempDir();
    const box = new Sandbox(settings(), { scratchRoot: root });
    const script =
      'mkdir -p "$HOME/locked/in" "$TMPDIR/t" && echo x > "$HOME/locked/in/f" && chmod 500 "$HOME/locked" "$HOME/locked/in" && ls -A "$HOME" "$TMPDIR" && echo "$HOME"';
    const result = await box.shell(script, { cwd: dir, captureStdout: true, timeoutMs: 60_000 }, { purpose: "suite", network: false, writable: [dir] });
    expect(result.exitCode).toBe(0);
    const out = result.stdout?.toString() ?? "";
    expect(out).toMatch(/locked/);
    expect(out.trim().split("\n").at(-1)).toMatch(new RegExp(`^${root}/harness-sandbox-${process.pid}-[^/]+/home$`));
    await scratchRemoved();
    expect(readdirSync(root)).toEqual([]);
  });
});

describe("removeStaleScratch", () => {
  it("removes the scratch folders of App processes that are gone and keeps those of live ones", () => {
    const root = makeTempDir();
    const dead = join(root, "harness-sandbox-999999999-abc");
    const mine = join(root, `harness-sandbox-${process.pid}-def`);
    const other = join(root, "something-else");
    for (const dir of [dead, mine, other]) mkdirSync(join(dir, "home"), { recursive: true });
    expect(removeStaleScratch(root)).toBe(1);
    expect([existsSync(dead), existsSync(mine), existsSync(other)]).toEqual([false, true, true]);
  });
});

describe("etcSecretMasks", () => {
  it("masks the known secrets, SSH host keys and whatever an ordinary user could not read, and nothing else", () => {
    const etc = makeTempDir();
    writeFiles(etc, {
      "shadow-": { content: "root:x\n", mode: 0o644 },
      "ssh/ssh_host_ed25519_key": { content: "PRIVATE\n", mode: 0o644 },
      "ssh/ssh_host_ed25519_key.pub": { content: "PUBLIC\n", mode: 0o644 },
      "redis/redis.conf": { content: "requirepass s3cret\n", mode: 0o640 },
      hostname: { content: "box\n", mode: 0o644 },
    });
    mkdirSync(join(etc, "ssl"));
    mkdirSync(join(etc, "ssl", "private"), { mode: 0o700 });
    const masks = etcSecretMasks(etc)
      .map((mask) => `${mask.path.slice(etc.length)}${mask.directory ? "/" : ""}`)
      .sort();
    expect(masks).toEqual(["/redis/redis.conf", "/shadow-", "/ssh/ssh_host_ed25519_key", "/ssl/private/"]);
  });
});
