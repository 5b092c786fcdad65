import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findNetTools, probeCachePath, probeSandboxCached, Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { schemas } from "../../src/schema/index.js";
import { makeTempDir, removeTempDirs, writeFiles } from "../support/tmp.js";

afterAll(removeTempDirs);

/** The host's bubblewrap; the test fails (never skips) without it. */
function realBwrap(): string {
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir !== "" && existsSync(join(dir, "bwrap"))) return join(dir, "bwrap");
  throw new Error("bubblewrap is not installed: apt-get install -y bubblewrap");
}

/**
 * A bwrap that counts its launches in `count` and then runs the real one: the probe launches it
 * once without the network and once with, so a fresh probe adds two lines, a cached answer none.
 */
function countingBwrap(dir: string): { bwrap: string; launches: () => number } {
  const count = join(dir, "count");
  writeFiles(dir, { bwrap: { content: `#!/bin/sh\necho x >> '${count}'\nexec '${realBwrap()}' "$@"\n`, mode: 0o755 } });
  return { bwrap: join(dir, "bwrap"), launches: () => (existsSync(count) ? readFileSync(count, "utf8").split("\n").filter(Boolean).length : 0) };
}

function box(bwrap: string): Sandbox {
  const tools = findNetTools(process.env.PATH ?? "");
  if ("missing" in tools)
    throw new Error(`the network probe needs ${tools.missing.join(", ")}: apt-get install -y slirp4netns (or passt), iproute2, util-linux`);
  return new Sandbox(sandboxSettingsFromEnv({}), { bwrap });
}

describe("the sandbox probe's answer kept per host", () => {
  it("is probed once with real bubblewrap, kept schema-valid in HARNESS_HOME, and read back while the host is unchanged", async () => {
    const home = makeTempDir();
    const { bwrap, launches } = countingBwrap(makeTempDir());
    await expect(probeSandboxCached(box(bwrap), home)).resolves.toEqual({ state: "on" });
    const probed = launches();
    expect(probed).toBeGreaterThan(0);
    const record = JSON.parse(readFileSync(probeCachePath(home), "utf8")) as { host: { programs: { name: string; path: string }[] } };
    expect(schemas().issues("sandbox-probe", record)).toEqual([]);
    expect(record.host.programs[0]).toMatchObject({ name: "bwrap", path: bwrap });

    // A second start (a new Sandbox, as a new process would make) launches nothing.
    await expect(probeSandboxCached(box(bwrap), home)).resolves.toEqual({ state: "on" });
    expect(launches()).toBe(probed);
  });

  it("probes again when bubblewrap changes (mtime) or the kernel release differs", async () => {
    const home = makeTempDir();
    const { bwrap, launches } = countingBwrap(makeTempDir());
    await probeSandboxCached(box(bwrap), home);
    const once = launches();

    const later = new Date(statSync(bwrap).mtimeMs + 60_000);
    utimesSync(bwrap, later, later);
    await expect(probeSandboxCached(box(bwrap), home)).resolves.toEqual({ state: "on" });
    const twice = launches();
    expect(twice).toBe(once * 2);

    await expect(probeSandboxCached(box(bwrap), home, { kernel: "0.0.0-another-kernel" })).resolves.toEqual({ state: "on" });
    expect(launches()).toBe(once * 3);
    expect(readFileSync(probeCachePath(home), "utf8")).toContain("0.0.0-another-kernel");
  });

  it("ignores and rewrites a corrupt file or one of another version", async () => {
    const home = makeTempDir();
    const { bwrap, launches } = countingBwrap(makeTempDir());
    await probeSandboxCached(box(bwrap), home);
    const once = launches();
    const good = readFileSync(probeCachePath(home), "utf8");

    writeFileSync(probeCachePath(home), good.slice(0, 40));
    await expect(probeSandboxCached(box(bwrap), home)).resolves.toEqual({ state: "on" });
    expect(launches()).toBe(once * 2);
    expect(schemas().parseValid("sandbox-probe", readFileSync(probeCachePath(home), "utf8"))).toBeDefined();

    writeFileSync(probeCachePath(home), good.replace('"version":1', '"version":2'));
    await expect(probeSandboxCached(box(bwrap), home)).resolves.toEqual({ state: "on" });
    expect(launches()).toBe(once * 3);
    expect(JSON.parse(readFileSync(probeCachePath(home), "utf8"))).toMatchObject({ version: 1 });
  });

  it("keeps no answer for a host that refuses, and drops the kept one when a sandboxed step fails to start", async () => {
    const home = makeTempDir();
    const dir = makeTempDir();
    const { bwrap } = countingBwrap(dir);
    const sandbox = box(bwrap);
    await probeSandboxCached(sandbox, home);
    expect(existsSync(probeCachePath(home))).toBe(true);

    // The host changes under the App without bubblewrap's file changing (a sysctl): its mtime is kept.
    const stat = statSync(bwrap);
    writeFileSync(bwrap, "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n");
    utimesSync(bwrap, stat.atime, stat.mtime);
    const step = await sandbox.run(["true"], { cwd: dir, timeoutMs: 30_000 }, { purpose: "suite", network: false, writable: [dir] });
    expect(step.exitCode).toBe(1);
    expect(existsSync(probeCachePath(home))).toBe(false);

    const refused = await probeSandboxCached(sandbox, home);
    expect(refused.state).toBe("unavailable");
    expect(existsSync(probeCachePath(home))).toBe(false);
  });
});
