import { readFileSync } from "node:fs";
import { DEFAULT_TAIL_BYTES, DEFAULT_TAIL_LINES, tailText } from "../exec/index.js";
import { readBoundedFileSync } from "../files/index.js";
import type { Sandbox, SandboxedResult } from "../sandbox/index.js";
import { venvEnv } from "../workspace/index.js";
import { describeSeatCommand, planSeatCommand, type AgentLaunch } from "./presets.js";
import { splitTranscript, type SeatUsage } from "./transcript.js";
import { watchForWaitingLoop } from "./watch.js";

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
  /** Where the agent runs: the operator's sandbox, resolved once at the edge (app.ts, cli/). */
  sandbox: Sandbox;
  /** Where a preset CLI's events are kept (its whole conversation); without it they stay in the log. */
  transcriptPath?: string;
  /** Applied to every text of the transcript and of the rewritten log (the App's secrets, the agent's credentials). */
  redact?: (text: string) => string;
  /** The most model turns the agent may take, for a CLI that can stop itself there. */
  maxTurns?: number;
  /** How often the agent's log is looked at for a CLI waiting for a network (default 500 ms). */
  watchIntervalMs?: number;
  /** Called with the agent's process (its sandbox's outermost) once it started. */
  onSpawn?: (pid: number) => void;
}

/** How a seat's agent ended. */
export interface SeatResult {
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  tail: string;
  spawnError?: string;
  /** The policy it ran under. */
  sandboxed: boolean;
  network: boolean;
  /** True when the agent was stopped because its output showed it waiting for a network. */
  stoppedWaiting?: boolean;
  /** What the agent spent, read from its transcript (a preset CLI's events only). */
  usage?: SeatUsage;
  /** The transcript's path, when one was kept. */
  transcript?: string;
}

/**
 * Runs the agent of a seat in the sandbox (through `src/exec`) in the task's worktree: a
 * timeout ends its whole process tree, its output goes to `logPath`, and its environment is the exec
 * allowlist plus `envAllow` plus the HARNESS_* variables a wrapper script can act on.
 */
export async function runSeat(request: SeatRequest): Promise<SeatResult> {
  const paths = { promptFile: request.promptFile, artifactDir: request.artifactDir, worktree: request.worktree };
  // A base URL reaches a CLI that does not read it from its environment only if the agent may receive it.
  const openaiBaseUrl = request.envAllow.includes("OPENAI_BASE_URL") ? process.env.OPENAI_BASE_URL : undefined;
  const command = planSeatCommand(request.launch, paths, {
    ...(openaiBaseUrl ? { openaiBaseUrl } : {}),
    ...(request.maxTurns !== undefined ? { maxTurns: request.maxTurns } : {}),
  });
  const options = {
    cwd: request.worktree,
    env: {
      allow: [...request.envAllow],
      set: {
        ...(command.kind === "argv" ? command.env : {}),
        HARNESS_STAGE: request.stage,
        HARNESS_ATTEMPT: String(request.attempt),
        ...(request.task !== undefined ? { HARNESS_TASK: request.task } : {}),
        HARNESS_PROMPT_FILE: request.promptFile,
        HARNESS_ARTIFACT_DIR: request.artifactDir,
        // The worktree's .venv first on PATH, as for the suite: an agent's `python -m pytest` tests the worktree's package.
        ...venvEnv(request.worktree, process.env.PATH ?? ""),
      },
    },
    timeoutMs: request.timeoutMs,
    logPath: request.logPath,
    ...(request.killGraceMs !== undefined ? { killGraceMs: request.killGraceMs } : {}),
    ...(request.signal !== undefined ? { signal: request.signal } : {}),
    ...(request.onSpawn !== undefined ? { onSpawn: request.onSpawn } : {}),
  };
  const sandbox = request.sandbox;
  // Agents have the network (model APIs); they write the worktree and their artifact folder
  // and read their prompt, nothing else of the App.
  const step = { purpose: "agent", network: true, writable: [request.worktree, request.artifactDir], readable: [request.promptFile] } as const;
  const watch = watchForWaitingLoop(request.logPath, request.watchIntervalMs ?? 500, request.signal);
  const watched = { ...options, signal: watch.signal };
  let result: SandboxedResult;
  try {
    if (command.kind === "shell") result = await sandbox.shell(command.command, watched, step);
    else {
      // Read at once (the App wrote it a moment ago): an await here let other work of the App go before the agent's launch.
      const input = command.promptOnStdin ? readFileSync(request.promptFile, "utf8") : undefined;
      result = await sandbox.run(command.argv, { ...watched, ...(input !== undefined ? { input } : {}) }, step);
    }
  } finally {
    watch.stop();
  }
  const seat: SeatResult = {
    command: describeSeatCommand(command),
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    tail: result.tail,
    sandboxed: result.sandboxed,
    network: result.network,
  };
  if (result.spawnError !== undefined) seat.spawnError = result.spawnError;
  if (watch.fired() && request.signal?.aborted !== true) seat.stoppedWaiting = true;
  if (command.kind === "argv" && command.transcript !== undefined && request.transcriptPath !== undefined) {
    // A CLI that never started wrote no log: nothing to split.
    const usage = await splitTranscript(request.logPath, request.transcriptPath, command.transcript, request.redact ?? ((text) => text)).catch(
      (error: unknown) => ((error as NodeJS.ErrnoException).code === "ENOENT" ? undefined : Promise.reject(error)),
    );
    if (usage !== undefined) {
      Object.assign(seat, { usage, transcript: request.transcriptPath });
      // What the CLI said in words (its final answer, its non-JSON lines) is what classifies a failure, not its event stream.
      // Read at once, as the split was: the thread pool is busy removing the step's scratch folder.
      const said = saidTail(request.logPath);
      if (said !== undefined) seat.tail = tailText(said, DEFAULT_TAIL_LINES, DEFAULT_TAIL_BYTES);
    }
  }
  return seat;
}

/** The last {@link DEFAULT_TAIL_BYTES} of the split log; undefined when it cannot be read. */
function saidTail(logPath: string): Buffer | undefined {
  try {
    return readBoundedFileSync(logPath, { maxBytes: DEFAULT_TAIL_BYTES, tail: true });
  } catch {
    return undefined;
  }
}
