/**
 * The agents of a task in their first seconds. An agent CLI's start is CPU-bound (Claude Code
 * and Codex take most of a second of a core before their first request), and on a small host
 * whatever the task starts beside it then delays it. The baseline, which runs beside the first
 * seat off the critical path, waits here before each of its sandboxed steps: it gives the
 * agent its first {@link START_MS}, then overlaps the agent's far longer wait on its model.
 *
 * The wait is a time, not a sign in the agent's output: Codex writes its first event about
 * 150 ms before its first request, and a baseline let go on that event still slowed the
 * request (bench/agents, 2 cores, Codex: the implementer's launch → first request 1.27× the
 * bare CLI with the baseline let go at the first output, 1.14× with it let go after the start).
 */

/** How long a launched agent counts as starting, unless it ends sooner. */
export const START_MS = 3000;

/** One agent launched: `ended()` once it exited. */
export interface AgentStart {
  ended(): void;
}

export class AgentBoots {
  private readonly starting = new Set<Promise<void>>();

  constructor(private readonly startMs: number = START_MS) {}

  /** Counts an agent as starting until it ended or its start time passed. */
  launched(): AgentStart {
    let end: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      const timer = setTimeout(() => end(), this.startMs);
      timer.unref();
      end = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.starting.add(started);
    void started.then(() => this.starting.delete(started));
    return { ended: () => end() };
  }

  /** Resolves once no agent of the task is starting. */
  async settled(): Promise<void> {
    while (this.starting.size > 0) await Promise.all([...this.starting]);
  }
}
