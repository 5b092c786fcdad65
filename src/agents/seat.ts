import { readFile } from "node:fs/promises";
import { exec, execShell, type ExecResult } from "../exec/index.js";
import { describeSeatCommand, planSeatCommand, type AgentLaunch } from "./presets.js";

/** One launch of an agent in a seat. */
export interface SeatRequest {
  launch: AgentLaunch;
  /** Stage id and attempt number, passed to the agent as HARNESS_STAGE and HARNESS_ATTEMPT. */
  stage: string;
  attempt: number;
  /** The task the agent works on, passed as HARNESS_TASK. */
  task?: string;
  worktree: string;
  promptFile: string;
  artifactDir: string;
  /** The agent's output goes here. */
  logPath: string;
  timeoutMs: number;
  /** Environment names the agent may receive beyond the base allowlist (already intersected with the operator's). */
  envAllow: readonly string[];
  killGraceMs?: number;
  signal?: AbortSignal;
}

/** How a seat's agent ended. */
export interface SeatResult {
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  tail: string;
  spawnError?: string;
}

/**
 * Runs the agent of a seat through `src/exec` in the task's worktree: a timeout ends its
 * whole process tree, its output goes to `logPath`, and its environment is the exec
 * allowlist plus `envAllow` plus the HARNESS_* variables a wrapper script can act on.
 */
export async function runSeat(request: SeatRequest): Promise<SeatResult> {
  const paths = { promptFile: request.promptFile, artifactDir: request.artifactDir, worktree: request.worktree };
  const command = planSeatCommand(request.launch, paths);
  const options = {
    cwd: request.worktree,
    env: {
      allow: [...request.envAllow],
      set: {
        HARNESS_STAGE: request.stage,
        HARNESS_ATTEMPT: String(request.attempt),
        ...(request.task !== undefined ? { HARNESS_TASK: request.task } : {}),
        HARNESS_PROMPT_FILE: request.promptFile,
        HARNESS_ARTIFACT_DIR: request.artifactDir,
      },
    },
    timeoutMs: request.timeoutMs,
    logPath: request.logPath,
    ...(request.killGraceMs !== undefined ? { killGraceMs: request.killGraceMs } : {}),
    ...(request.signal !== undefined ? { signal: request.signal } : {}),
  };
  let result: ExecResult;
  if (command.kind === "shell") result = await execShell(command.command, options);
  else {
    const input = command.promptOnStdin ? await readFile(request.promptFile, "utf8") : undefined;
    result = await exec(command.argv, { ...options, ...(input !== undefined ? { input } : {}) });
  }
  const seat: SeatResult = {
    command: describeSeatCommand(command),
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    tail: result.tail,
  };
  if (result.spawnError !== undefined) seat.spawnError = result.spawnError;
  return seat;
}
