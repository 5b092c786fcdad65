import { join } from "node:path";
import {
  DEFAULT_PROVISION_TIMEOUT_MS,
  ProvisionConfigError,
  resolveProvisionCommand,
  validateProvisionConfig,
  type ProvisionConfig,
} from "../../src/workspace/index.js";
import { makeTempDir, removeTempDirs, writeFiles, type FileSpec } from "../support/tmp.js";

afterAll(removeTempDirs);

const HOOK = { content: "#!/bin/sh\nexit 0\n", mode: 0o755 };
const worktreeWith = (files: Record<string, FileSpec>): string => {
  const dir = makeTempDir("harness-ladder-");
  writeFiles(dir, files);
  return dir;
};

describe("resolveProvisionCommand ladder", () => {
  it("config command wins over everything, run through /bin/sh -lc", () => {
    const worktree = worktreeWith({ ".harness/provision.sh": HOOK, "pnpm-lock.yaml": "", "package-lock.json": "{}" });
    expect(resolveProvisionCommand({ worktree, config: { command: "make deps" } })).toEqual({
      source: "config",
      cmd: "make deps",
      argv: ["/bin/sh", "-lc", "make deps"],
    });
  });

  it("an executable hook wins over lockfiles", () => {
    const worktree = worktreeWith({ ".harness/provision.sh": HOOK, "pnpm-lock.yaml": "", "Cargo.toml": "" });
    const hook = join(worktree, ".harness/provision.sh");
    expect(resolveProvisionCommand({ worktree })).toEqual({ source: "hook", cmd: hook, argv: [hook] });
  });

  it("a hook without the executable bit is ignored", () => {
    const worktree = worktreeWith({ ".harness/provision.sh": { content: "#!/bin/sh\n", mode: 0o644 }, "pnpm-lock.yaml": "" });
    expect(resolveProvisionCommand({ worktree }).source).toBe("pnpm");
  });

  it("pnpm, then npm, then yarn, each with its exact argv", () => {
    expect(resolveProvisionCommand({ worktree: worktreeWith({ "pnpm-lock.yaml": "", "package-lock.json": "{}", "yarn.lock": "" }) })).toEqual({
      source: "pnpm",
      cmd: "pnpm install --frozen-lockfile --prefer-offline",
      argv: ["pnpm", "install", "--frozen-lockfile", "--prefer-offline"],
    });
    expect(resolveProvisionCommand({ worktree: worktreeWith({ "package-lock.json": "{}", "yarn.lock": "", "Cargo.toml": "" }) })).toEqual({
      source: "npm",
      cmd: "npm ci",
      argv: ["npm", "ci"],
    });
    expect(resolveProvisionCommand({ worktree: worktreeWith({ "yarn.lock": "", "Cargo.toml": "" }) })).toEqual({
      source: "yarn",
      cmd: "yarn install --frozen-lockfile",
      argv: ["yarn", "install", "--frozen-lockfile"],
    });
  });

  it("Cargo.toml and an empty worktree are no-ops", () => {
    expect(resolveProvisionCommand({ worktree: worktreeWith({ "Cargo.toml": "" }) })).toEqual({ source: "cargo", cmd: null, argv: null });
    expect(resolveProvisionCommand({ worktree: worktreeWith({ "README.md": "" }) })).toEqual({ source: "none", cmd: null, argv: null });
  });

  it("a lockfile name that is a folder does not count", () => {
    expect(resolveProvisionCommand({ worktree: worktreeWith({ "package-lock.json/x": "" }) }).source).toBe("none");
  });

  it("a hook name that is a folder (searchable, so executable to access()) does not count", () => {
    const worktree = worktreeWith({ ".harness/provision.sh/x": "", "yarn.lock": "" });
    expect(resolveProvisionCommand({ worktree }).source).toBe("yarn");
  });
});

describe("validateProvisionConfig", () => {
  it("defaults the timeout to 600000 ms", () => {
    expect(DEFAULT_PROVISION_TIMEOUT_MS).toBe(600_000);
    expect(validateProvisionConfig(undefined).timeoutMs).toBe(600_000);
    expect(validateProvisionConfig({ timeoutMs: 1500 }).timeoutMs).toBe(1500);
  });

  it.each<[string, unknown]>([
    ["timeoutMs", 0],
    ["timeoutMs", -5],
    ["timeoutMs", 1.5],
    ["timeoutMs", "100"],
    ["timeoutMs", Number.NaN],
    ["command", ""],
    ["command", "   "],
    ["command", 42],
    ["command", null],
  ])("rejects %s = %p, naming the field", (field, value) => {
    const config = { [field]: value } as unknown as ProvisionConfig;
    expect(() => validateProvisionConfig(config)).toThrow(ProvisionConfigError);
    try {
      validateProvisionConfig(config);
    } catch (error) {
      expect((error as ProvisionConfigError).field).toBe(field);
      expect((error as ProvisionConfigError).failureClass).toBe("config-invalid");
      expect((error as Error).message).toContain(`provision.${field}`);
    }
  });

  it("rejects malformed env settings", () => {
    expect(() => validateProvisionConfig({ env: { allow: "PATH" } } as unknown as ProvisionConfig)).toThrow(/provision\.env\.allow/);
    expect(() => validateProvisionConfig({ env: { set: { A: 1 } } } as unknown as ProvisionConfig)).toThrow(/provision\.env\.set/);
  });
});
