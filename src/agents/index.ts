export {
  AGENT_PRESETS,
  planSeatCommand,
  renderCommandTemplate,
  describeSeatCommand,
  shellQuote,
  presetProgram,
  COMMAND_PLACEHOLDERS,
  type AgentPreset,
  type AgentLaunch,
  type SeatPaths,
  type SeatCommand,
  type ProviderSettings,
} from "./presets.js";
export { runSeat, type SeatRequest, type SeatResult } from "./seat.js";
export { classifyAgentOutput, classifySeatEnd, showsWaitingLoop, type AgentUnavailable, type UnavailableReason } from "./unavailable.js";
export { parseResetTime } from "./reset-time.js";
export { dispatchSeat, sleepUntil, DEFAULT_MAX_PARK_MS, type DispatchResult, type DispatchHooks, type UnavailableBinding } from "./dispatch.js";
export { watchForWaitingLoop, type LogWatch } from "./watch.js";
export { agentLogTail, withLogTail, redactAgentText } from "./log-tail.js";
export { splitTranscript, MAX_TRANSCRIPT_BYTES, MAX_TRANSCRIPT_LINE_BYTES, type SeatUsage, type TranscriptFormat } from "./transcript.js";
