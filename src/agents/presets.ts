/**
 * How each seat's agent is launched. Presets are argument arrays (no shell); a user's command
 * template is a shell string whose placeholders are substituted shell-quoted, so a path with
 * spaces or quotes cannot change the command.
 */
import type { TranscriptFormat } from "./transcript.js";

/** Agent CLIs the harness drives without a command template. */
export type AgentPreset = "claude-code" | "codex" | "aider";

export const AGENT_PRESETS: readonly AgentPreset[] = ["claude-code", "codex", "aider"];

/** A preset, or a command template with `{prompt_file}`, `{artifact_dir}`, `{worktree}`. */
export interface AgentLaunch {
  preset?: AgentPreset;
  command?: string;
}

/** The values placeholders stand for. */
export interface SeatPaths {
  promptFile: string;
  artifactDir: string;
  worktree: string;
}

/** What to run: an argument array (stdin may carry the prompt) or a user's shell command. */
export type SeatCommand =
  | { kind: "argv"; argv: string[]; promptOnStdin: boolean; transcript?: TranscriptFormat; env?: Readonly<Record<string, string>> }
  | { kind: "shell"; command: string };

interface PresetSpec {
  argv: readonly string[];
  /** The CLI reads its prompt from stdin. */
  promptOnStdin: boolean;
  /** The events it prints on stdout, kept as the seat's transcript. */
  transcript?: TranscriptFormat;
  /** Variables the CLI is started with, besides the ones the seat passes. */
  env?: Readonly<Record<string, string>>;
}

// The agents edit files and run commands unattended inside a harness-owned worktree; the
// harness commits, so agents are told not to.
const PRESETS: Record<AgentPreset, PresetSpec> = {
  // The whole conversation as JSON lines (stream-json needs --verbose in print mode): the seat's transcript.
  "claude-code": {
    argv: ["claude", "-p", "--permission-mode", "bypassPermissions", "--output-format", "stream-json", "--verbose"],
    promptOnStdin: true,
    transcript: "claude-stream-json",
    // Only the model API: no telemetry, error reports, update checks or feature flags from an
    // unattended seat. Each was a name lookup through the namespace's user-mode stack, and the
    // CLI waited on them at its start and before its exit (~0.1 s a seat, bench/agents).
    env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
  },
  // Codex's own sandbox stays on (workspace-write: the worktree), with the artifact folder added
  // (the verifier writes verdict.json there, outside the worktree) and the network kept: the
  // harness's bubblewrap is the boundary, and the product promises agents the package registries.
  codex: {
    argv: [
      "codex",
      "exec",
      "--json",
      "--sandbox",
      "workspace-write",
      "-c",
      "sandbox_workspace_write.network_access=true",
      "--add-dir",
      "{artifact_dir}",
      "--skip-git-repo-check",
      "--cd",
      "{worktree}",
      "-",
    ],
    promptOnStdin: true,
    transcript: "codex-json",
  },
  aider: { argv: ["aider", "--message-file", "{prompt_file}", "--yes-always", "--no-auto-commits", "--no-check-update"], promptOnStdin: false },
};

/**
 * Where a preset's CLI finds its model provider, when the operator passes one: Codex 0.171 does
 * not read `OPENAI_BASE_URL`, so the value reaches it as a provider of its configuration given
 * with `-c` (no `config.toml`, no shared `CODEX_HOME`: each seat's home is private and fresh).
 */
export interface ProviderSettings {
  openaiBaseUrl?: string;
  /** The budget's turns per seat, passed to a CLI that can stop itself there (Claude Code's `--max-turns`; Codex 0.171 has no such option). */
  maxTurns?: number;
}

/** The `-c` overrides that point Codex at `baseUrl` (the Responses API, the key in OPENAI_API_KEY). */
function codexProviderArgs(baseUrl: string): string[] {
  const id = "harness_openai";
  return [
    "-c",
    `model_provider=${JSON.stringify(id)}`,
    "-c",
    `model_providers.${id}.name="OpenAI (OPENAI_BASE_URL)"`,
    "-c",
    `model_providers.${id}.base_url=${JSON.stringify(baseUrl)}`,
    "-c",
    `model_providers.${id}.env_key="OPENAI_API_KEY"`,
    "-c",
    `model_providers.${id}.wire_api="responses"`,
  ];
}

/** The placeholders a command template may use. */
export const COMMAND_PLACEHOLDERS: readonly string[] = ["prompt_file", "artifact_dir", "worktree"];

const PLACEHOLDER = /\{(prompt_file|artifact_dir|worktree)\}/g;

/** The program a preset starts (looked up on PATH). */
export function presetProgram(preset: AgentPreset): string {
  return PRESETS[preset].argv[0] ?? preset;
}

function valueOf(name: string, paths: SeatPaths): string {
  if (name === "prompt_file") return paths.promptFile;
  if (name === "artifact_dir") return paths.artifactDir;
  return paths.worktree;
}

/** Quotes a value for `/bin/sh` so that it is one word, whatever it contains. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Substitutes placeholders in a user's command template, each value shell-quoted. */
export function renderCommandTemplate(template: string, paths: SeatPaths): string {
  return template.replace(PLACEHOLDER, (_match, name: string) => shellQuote(valueOf(name, paths)));
}

/**
 * The command a seat runs. A template wins over a preset; with neither, there is nothing to
 * run, which is a configuration error for the caller to report. `providers` are the provider
 * settings the agent receives (a template reads them from its environment itself).
 */
export function planSeatCommand(launch: AgentLaunch, paths: SeatPaths, providers: ProviderSettings = {}): SeatCommand {
  if (launch.command !== undefined) return { kind: "shell", command: renderCommandTemplate(launch.command, paths) };
  if (launch.preset !== undefined) {
    const preset = PRESETS[launch.preset];
    const argv = preset.argv.map((arg) => arg.replace(PLACEHOLDER, (_match, name: string) => valueOf(name, paths)));
    // Options go before the final "-" (the prompt on stdin).
    if (launch.preset === "codex" && providers.openaiBaseUrl) argv.splice(argv.length - 1, 0, ...codexProviderArgs(providers.openaiBaseUrl));
    if (launch.preset === "claude-code" && providers.maxTurns !== undefined) argv.push("--max-turns", String(providers.maxTurns));
    return {
      kind: "argv",
      argv,
      promptOnStdin: preset.promptOnStdin,
      ...(preset.transcript ? { transcript: preset.transcript } : {}),
      ...(preset.env ? { env: preset.env } : {}),
    };
  }
  throw new TypeError("agent: neither a preset nor a command is configured");
}

/** A one-line description of a planned command for logs and events. */
export function describeSeatCommand(command: SeatCommand): string {
  return command.kind === "shell" ? command.command : command.argv.join(" ");
}
