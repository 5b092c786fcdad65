import type { AgentLaunch } from "../agents/index.js";

/** Who sits in the seat: the bindings in the order they are tried, and the seat's timeout. */
export interface SeatBinding {
  launch: AgentLaunch;
  fallback: AgentLaunch[];
  timeoutMs: number;
}
