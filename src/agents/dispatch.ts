/**
 * A seat's bindings, tried in order: the first agent that can work does the stage. An agent
 * found unavailable hands over to the next binding (`agent.fallback`); when every binding is
 * unavailable and one of them named its reset time, the seat is parked until the earliest
 * reset and tried again from the first. None of this counts as an attempt of the change.
 */
import { describeSeatCommand, planSeatCommand, type AgentLaunch } from "./presets.js";
import { runSeat, type SeatRequest, type SeatResult } from "./seat.js";
import { classifySeatEnd, type AgentUnavailable } from "./unavailable.js";

/** A binding that was found unavailable. */
export interface UnavailableBinding {
  launch: AgentLaunch;
  command: string;
  unavailable: AgentUnavailable;
}

/** How a seat's dispatch ended. */
export type DispatchResult =
  { kind: "ran"; launch: AgentLaunch; result: SeatResult; unavailable: UnavailableBinding[] } | { kind: "unavailable"; unavailable: UnavailableBinding[] };

export interface DispatchHooks {
  now: () => Date;
  /** Waits until `at` (resolves early when the signal aborts). */
  sleepUntil: (at: Date, signal?: AbortSignal) => Promise<void>;
  onUnavailable?: (binding: UnavailableBinding) => Promise<void>;
  onParked?: (until: Date, bindings: readonly UnavailableBinding[]) => Promise<void>;
  /** The longest a seat may be parked at once; a later reset is reported unavailable. */
  maxParkMs?: number;
  /** How many times a seat may be parked before it is reported unavailable. */
  maxParks?: number;
  /** Runs one binding (the real {@link runSeat} by default). */
  run?: (request: SeatRequest) => Promise<SeatResult>;
}

/** Default ceiling of one park: a five-hour window and a little. */
export const DEFAULT_MAX_PARK_MS = 6 * 3_600_000;

/** Runs the seat with its bindings in order, parking on a rate limit that names its reset. */
export async function dispatchSeat(request: Omit<SeatRequest, "launch">, bindings: readonly AgentLaunch[], hooks: DispatchHooks): Promise<DispatchResult> {
  const run = hooks.run ?? runSeat;
  const maxParks = hooks.maxParks ?? 3;
  const seen: UnavailableBinding[] = [];
  for (let parks = 0; ; parks += 1) {
    const round: UnavailableBinding[] = [];
    for (const launch of bindings) {
      const result = await run({ ...request, launch });
      const unavailable = request.signal?.aborted ? undefined : classifySeatEnd(result, hooks.now());
      if (!unavailable) return { kind: "ran", launch, result, unavailable: seen };
      const binding = { launch, command: commandOf(launch, request), unavailable };
      round.push(binding);
      seen.push(binding);
      await hooks.onUnavailable?.(binding);
    }
    const resets = round
      .map((binding) => binding.unavailable.resetAt)
      .filter((at): at is string => at !== undefined)
      .map((at) => new Date(at));
    if (resets.length === 0 || parks >= maxParks) return { kind: "unavailable", unavailable: seen };
    const until = new Date(Math.min(...resets.map((at) => at.getTime())));
    if (until.getTime() - hooks.now().getTime() > (hooks.maxParkMs ?? DEFAULT_MAX_PARK_MS)) return { kind: "unavailable", unavailable: seen };
    await hooks.onParked?.(until, round);
    await hooks.sleepUntil(until, request.signal);
    if (request.signal?.aborted) return { kind: "unavailable", unavailable: seen };
  }
}

function commandOf(launch: AgentLaunch, request: Omit<SeatRequest, "launch">): string {
  try {
    return describeSeatCommand(planSeatCommand(launch, { promptFile: request.promptFile, artifactDir: request.artifactDir, worktree: request.worktree }));
  } catch {
    return "(no agent)";
  }
}

/** Waits until `at` on the real clock; an abort ends the wait early. */
export function sleepUntil(at: Date, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, Math.max(0, at.getTime() - Date.now()));
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
