/**
 * The real agent CLIs, installed from npm at pinned versions into a cache folder of this
 * checkout (`node_modules/.cache/harness-agent-clis/`), once: a later run reuses them. Their
 * install scripts are not run (a third party's code, as root in CI): Claude Code's launcher
 * needs its postinstall, so `bin/claude` links its platform package's binary directly, and
 * Codex's launcher finds its platform binary by itself.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { exec } from "../../src/exec/index.js";

/** The versions the presets and the unavailable-agent messages were checked against. */
export const CLAUDE_CODE_VERSION = "2.1.332";
export const CODEX_VERSION = "0.171.0";

export interface InstalledClis {
  /** The folder holding everything installed (the sandbox must be granted it to run them). */
  root: string;
  /** A folder holding `claude` and `codex`, for PATH. */
  bin: string;
}

function platformSuffix(): string {
  const arch = process.arch === "x64" || process.arch === "arm64" ? process.arch : undefined;
  if (process.platform !== "linux" || arch === undefined)
    throw new Error(`the real-CLI tests install linux-x64 or linux-arm64 builds; this is ${process.platform}-${process.arch}`);
  return `linux-${arch}`;
}

/** Installs (or finds) the pinned CLIs; throws with npm's words and the fix when it cannot. */
export async function installRealClis(): Promise<InstalledClis> {
  const root = resolve("node_modules", ".cache", "harness-agent-clis", `claude-code@${CLAUDE_CODE_VERSION}+codex@${CODEX_VERSION}`);
  const bin = join(root, "bin");
  const done = join(root, "installed");
  if (existsSync(done)) return { root, bin };
  // Several test files install at once (jest's workers): each builds in a folder of its own and
  // renames it into place when whole; the first rename wins and the others use its result.
  const staging = `${root}.${process.pid}-${randomBytes(4).toString("hex")}`;
  mkdirSync(staging, { recursive: true });
  try {
    writeFileSync(join(staging, "package.json"), `${JSON.stringify({ name: "harness-agent-clis", private: true })}\n`);
    const packages = [`@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`, `@openai/codex@${CODEX_VERSION}`];
    const result = await exec(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error", ...packages], {
      cwd: staging,
      env: { allow: ["npm_config_registry", "npm_config_cache", "NPM_CONFIG_REGISTRY", "NPM_CONFIG_CACHE", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"] },
      timeoutMs: 600_000,
      logPath: join(staging, "install.log"),
    });
    if (result.exitCode !== 0) {
      throw new Error(
        `installing the real agent CLIs (${packages.join(", ")}) from the npm registry failed; this test needs the registry reachable:\n${result.tail}`,
      );
    }
    const stagedBin = join(staging, "bin");
    mkdirSync(stagedBin);
    // Relative links: a copy of the cache (another checkout's node_modules) still leads to its own files, which the sandbox is granted.
    symlinkSync(join("..", "node_modules", "@anthropic-ai", `claude-code-${platformSuffix()}`, "claude"), join(stagedBin, "claude"));
    symlinkSync(join("..", "node_modules", "@openai", "codex", "bin", "codex.js"), join(stagedBin, "codex"));
    writeFileSync(join(staging, "installed"), `${packages.join("\n")}\n`);
    // A folder left without its marker (an install killed before this scheme) is not an install.
    if (existsSync(root) && !existsSync(done)) rmSync(root, { recursive: true, force: true });
    try {
      renameSync(staging, root);
    } catch (error) {
      if (!existsSync(done)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return { root, bin };
}
