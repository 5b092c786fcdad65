/** The slash-command language: `/harness <command>` lines parsed out of a comment, outside code and hidden HTML. */
export { parseCommands, KNOWN_COMMANDS, MAX_COMMANDS, MAX_COMMENT_CHARS, type HarnessCommand, type KnownCommand, type ParseOptions } from "./commands.js";
