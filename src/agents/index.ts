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
} from "./presets.js";
export { runSeat, type SeatRequest, type SeatResult } from "./seat.js";
