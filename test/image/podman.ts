/**
 * Podman for the image test, through the one process wrapper: the private containers.conf
 * (CONTAINERS_CONF) and PATH pass, nothing else of this process's environment.
 */
import { exec, type ExecResult } from "../../src/exec/index.js";

const PASSED = ["CONTAINERS_CONF", "PATH", "HOME", "XDG_RUNTIME_DIR"];

/** Runs `podman args…`; its stdout captured, everything in the tail. */
export function podman(args: string[], options: { timeoutMs?: number; cwd?: string } = {}): Promise<ExecResult> {
  return exec(["podman", ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: { allow: PASSED },
    timeoutMs: options.timeoutMs ?? 300_000,
    captureStdout: true,
    tailLines: 200,
    tailBytes: 256 * 1024,
  });
}

/** Runs `podman-compose args…` in the project folder `cwd`. */
export function podmanCompose(args: string[], cwd: string, timeoutMs = 600_000): Promise<ExecResult> {
  return exec(["podman-compose", ...args], { cwd, env: { allow: PASSED }, timeoutMs, captureStdout: true, tailLines: 200, tailBytes: 256 * 1024 });
}

/** Its stdout, or a thrown error with the command's output when it failed. */
export async function ok(result: Promise<ExecResult>, what: string): Promise<string> {
  const done = await result;
  if (done.timedOut) throw new Error(`${what}: still running after ${Math.round(done.durationMs / 1000)} s, ended by its hang guard\n${done.tail}`);
  if (done.exitCode !== 0) throw new Error(`${what}: exit ${done.exitCode ?? done.signal ?? "none"}\n${done.tail}`);
  return done.stdout?.toString("utf8") ?? "";
}

/** Polls `probe` every `everyMs` (a container is a process per look) until it gives a value; a hang guard ends it. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, everyMs = 500): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Prints one step's outcome, as the CI log shows it. */
export function say(line: string): void {
  process.stdout.write(`test:image: ${line}\n`);
}
