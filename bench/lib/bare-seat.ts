/**
 * An agent CLI run bare: the argv and environment a preset plans, under bubblewrap with the view
 * a seat's step gets (the system read-only, a fresh HOME and TMPDIR, the worktree and artifact
 * folder writable, the prompt and the CLI's folder readable, /etc's secrets masked), and nothing
 * else of the harness: no seat dispatch, no network namespace (the host's, so the provider on
 * loopback is reached directly), no process limits, no log watch, no transcript split. The
 * baseline `bench/agents.ts` holds a harness seat against.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { planSeatCommand, type AgentPreset } from "../../src/agents/index.js";
import { exec } from "../../src/exec/index.js";
import { bwrapArgs, etcSecretMasks, hostSystemEntries, isInside } from "../../src/sandbox/index.js";

/** What a bare run needs: the CLI, the seat's paths, and the provider's environment. */
export interface BareSeat {
  preset: AgentPreset;
  worktree: string;
  promptFile: string;
  artifactDir: string;
  /** Folders the CLI's program lives in (an operator's HARNESS_SANDBOX_READ). */
  readPaths: readonly string[];
  /** PATH inside (the CLI's bin folder first). */
  path: string;
  /** The provider's key and base URL, as the seat's agent receives them. */
  env: Record<string, string>;
  /** Codex reads its base URL from its configuration only. */
  openaiBaseUrl?: string;
  logPath: string;
}

/** When the bare CLI was launched and when it ended (`Date.now()`), and its exit code. */
export interface BareTiming {
  launchedAt: number;
  endedAt: number;
  exitCode: number | null;
}

/** Runs the CLI of `seat` bare in the seat's bubblewrap view; throws when bubblewrap is not installed. */
export async function runBareSeat(seat: BareSeat): Promise<BareTiming> {
  const scratch = mkdtempSync(join(tmpdir(), "harness-bench-bare-"));
  const home = join(scratch, "home");
  const tmp = join(scratch, "tmp");
  mkdirSync(home);
  mkdirSync(tmp);
  try {
    const command = planSeatCommand(
      { preset: seat.preset },
      { promptFile: seat.promptFile, artifactDir: seat.artifactDir, worktree: seat.worktree },
      seat.openaiBaseUrl !== undefined ? { openaiBaseUrl: seat.openaiBaseUrl } : {},
    );
    if (command.kind !== "argv") throw new Error("a preset plans an argv");
    const system = hostSystemEntries();
    const writable = [seat.worktree, seat.artifactDir];
    const readable = [seat.promptFile, ...seat.readPaths];
    const visible = [...system.filter((entry) => entry.kind === "ro-bind").map((entry) => entry.path), ...writable, ...readable];
    const masked = etcSecretMasks().filter((mask) => existsSync(mask.path) && visible.some((root) => isInside(mask.path, root)));
    const view = { cwd: seat.worktree, home, tmp, writable, readable, masked, network: true, system };
    const input = command.promptOnStdin ? readFileSync(seat.promptFile, "utf8") : undefined;
    const launchedAt = Date.now();
    const result = await exec(["bwrap", ...bwrapArgs(view), ...command.argv], {
      cwd: seat.worktree,
      env: {
        allow: [],
        set: {
          ...command.env,
          ...seat.env,
          PATH: seat.path,
          HOME: home,
          TMPDIR: tmp,
          HARNESS_PROMPT_FILE: seat.promptFile,
          HARNESS_ARTIFACT_DIR: seat.artifactDir,
        },
      },
      timeoutMs: 180_000,
      logPath: seat.logPath,
      ...(input !== undefined ? { input } : {}),
    });
    if (result.spawnError !== undefined) throw new Error(`bwrap did not start (${result.spawnError}): apt-get install -y bubblewrap`);
    return { launchedAt, endedAt: Date.now(), exitCode: result.exitCode };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
