/**
 * The agents of a task in their first seconds. An agent CLI's start is CPU-bound (Claude Code
 * and Codex take most of a second of a core before their first request), and on a small host
 * whatever the task starts beside it then delays it. The baseline, which runs beside the first
 * seat off the critical path, waits here before each of its sandboxed steps: it gives the
 * agent its start, then overlaps the agent's far longer wait on its model.
 *
 * The start ends when the agent's processes go idle (less than {@link IDLE_CPU_MS} of CPU in a
 * {@link SAMPLE_MS} window: it waits on its model, or it is a script that sleeps), when it
 * ends, or after {@link START_MS} at most. Not a sign in the agent's output: Codex writes its
 * first event about 150 ms before its first request, and a baseline let go on that event still
 * slowed the request (bench/agents, 2 cores, Codex: 1.27× the bare CLI's launch → first
 * request). Nor a fixed time alone: an agent that waits at once (a model that thinks for
 * seconds, a scripted agent) would hold the baseline, and with it the task's second stage.
 */
import { AGENT_IDLE, treeCpuMs, watchIdle, type IdleWatch } from "../exec/index.js";

/** How long a launched agent counts as starting at most, unless it ends or goes idle sooner. */
export const START_MS = 3000;
/** How often a starting agent's CPU is read. */
export const SAMPLE_MS = AGENT_IDLE.sampleMs;
/** Less CPU than this in one sample's window is an idle agent (AGENT_IDLE). */
export const IDLE_CPU_MS = AGENT_IDLE.idleCpuMs;

/** One agent launched: `spawned` with its process once it runs, `ended()` once it exited. */
export interface AgentStart {
  spawned(pid: number): void;
  ended(): void;
}

/** Where an agent's CPU is read, and how often (tests pass their own). */
export interface BootClock {
  startMs: number;
  sampleMs: number;
  /** The CPU time, in ms, the process `pid` and its descendants have used; undefined once it is gone. */
  cpuMs: (pid: number) => number | undefined;
}

/** The real one: /proc's CPU times, read every {@link SAMPLE_MS}, for at most {@link START_MS}. */
export const SYSTEM_BOOT_CLOCK: BootClock = { startMs: START_MS, sampleMs: SAMPLE_MS, cpuMs: treeCpuMs };

/** One agent starting: its start's end, and reading its CPU while somebody waits for that. */
interface Boot {
  over: Promise<void>;
  watch(): void;
}

export class AgentBoots {
  private readonly starting = new Set<Boot>();
  /** How many wait in {@link settled}: the CPU of starting agents is read only while one does. */
  private waiters = 0;

  constructor(private readonly clock: BootClock = SYSTEM_BOOT_CLOCK) {}

  /**
   * Counts an agent as starting until it ended, went idle, or its start time passed. Its CPU is
   * read only while somebody waits for its start to be over: most seats launch with nobody
   * waiting (the baseline answered), and reading an agent's tree ten times a second is CPU its
   * start does not get on a small host.
   */
  launched(): AgentStart {
    let end: () => void = () => undefined;
    let idle: IdleWatch | undefined;
    let pid: number | undefined;
    let over = false;
    const unwatch = (): void => {
      idle?.cancel();
      idle = undefined;
    };
    const watch = (): void => {
      if (over || pid === undefined || idle !== undefined) return;
      idle = watchIdle(pid, () => end(), { sampleMs: this.clock.sampleMs, idleCpuMs: IDLE_CPU_MS, cpuMs: this.clock.cpuMs });
    };
    const boot: Boot = {
      over: new Promise<void>((resolve) => {
        const timer = setTimeout(() => end(), this.clock.startMs);
        timer.unref();
        end = () => {
          over = true;
          clearTimeout(timer);
          unwatch();
          this.starting.delete(boot);
          resolve();
        };
      }),
      watch,
    };
    this.starting.add(boot);
    // A seat's next binding (its fallback agent) is a new process: its CPU is read from then on.
    const spawned = (spawnedPid: number): void => {
      if (over) return;
      unwatch();
      pid = spawnedPid;
      if (this.waiters > 0) watch();
    };
    return { spawned, ended: () => end() };
  }

  /** Resolves once no agent of the task is starting. */
  async settled(): Promise<void> {
    this.waiters += 1;
    try {
      while (this.starting.size > 0) {
        const boots = [...this.starting];
        for (const boot of boots) boot.watch();
        await Promise.all(boots.map((boot) => boot.over));
      }
    } finally {
      // Every start it waited for is over, and with it the reading of its CPU.
      this.waiters -= 1;
    }
  }
}
