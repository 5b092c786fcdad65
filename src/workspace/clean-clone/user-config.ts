/**
 * What of a user's own global git configuration decides the commit their `git add -A && git
 * commit` makes: the ignore file (`core.excludesFile`, or git's default under
 * `$XDG_CONFIG_HOME/git/ignore`) and the line-ending conversion (`core.autocrlf`, `core.eol`).
 * Every other git call of the App reads no global configuration (GIT_CONFIG_GLOBAL=/dev/null):
 * hooks, fsmonitor, filter drivers and includes stay out. Only these three keys are read, from
 * the user's two global files, includes not followed, and only where the CLI runs for the user
 * (the App has no user whose ignore file would count).
 */
import { existsSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { gitResult } from "../git.js";

export interface UserGitSettings {
  excludesFile?: string;
  autocrlf?: string;
  eol?: string;
}

const KEYS: Record<string, keyof UserGitSettings> = { "core.excludesfile": "excludesFile", "core.autocrlf": "autocrlf", "core.eol": "eol" };

/** `~/x` as git expands it for a path-valued key. */
function expandHome(value: string, home: string | undefined): string {
  if (home !== undefined && (value === "~" || value.startsWith("~/"))) return join(home, value.slice(1));
  return value;
}

/** The three keys in one global config file (later lines win, as in git); nothing when it is absent. */
async function readFile(file: string, cwd: string): Promise<UserGitSettings> {
  if (!existsSync(file)) return {};
  const result = await gitResult(["config", "--file", file, "--null", "--get-regexp", "^core\\.(excludesfile|autocrlf|eol)$"], { cwd, readOnly: true });
  // Exit 1: none of the keys is set. Any other failure (a malformed file) is git's to report to the user, not ours to guess.
  if (result.exitCode !== 0) return {};
  const settings: UserGitSettings = {};
  for (const entry of (result.stdout ?? Buffer.alloc(0)).toString("utf8").split("\0")) {
    const newline = entry.indexOf("\n");
    if (newline < 0) continue;
    const key = KEYS[entry.slice(0, newline).toLowerCase()];
    if (key !== undefined) settings[key] = entry.slice(newline + 1);
  }
  return settings;
}

/**
 * The user's settings from `$XDG_CONFIG_HOME/git/config` (or `~/.config/git/config`) and then
 * `~/.gitconfig`, which wins where both set a key, as in git. The ignore file is git's default
 * one when the key is unset and that file exists.
 */
export async function userGitSettings(env: NodeJS.ProcessEnv, cwd: string): Promise<UserGitSettings> {
  const home = env.HOME !== undefined && isAbsolute(env.HOME) ? env.HOME : undefined;
  const xdg =
    env.XDG_CONFIG_HOME !== undefined && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : home !== undefined ? join(home, ".config") : undefined;
  const files = [...(xdg !== undefined ? [join(xdg, "git", "config")] : []), ...(home !== undefined ? [join(home, ".gitconfig")] : [])];
  const settings: UserGitSettings = {};
  for (const file of files) Object.assign(settings, await readFile(file, cwd));
  if (settings.excludesFile !== undefined) settings.excludesFile = expandHome(settings.excludesFile, home);
  else if (xdg !== undefined && existsSync(join(xdg, "git", "ignore"))) settings.excludesFile = join(xdg, "git", "ignore");
  return settings;
}

/** A value as git's config file format quotes it. */
function quoteValue(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\t/g, "\\t")}"`;
}

/**
 * Writes the settings as a global config file in `dir` (for GIT_CONFIG_GLOBAL), so that the
 * repository's own configuration still wins over them, as it does for the user; undefined when
 * there is nothing to write.
 */
export function writeUserGitConfig(settings: UserGitSettings | undefined, dir: string): string | undefined {
  if (settings === undefined) return undefined;
  const lines = [
    ...(settings.excludesFile !== undefined ? [`\texcludesFile = ${quoteValue(settings.excludesFile)}`] : []),
    ...(settings.autocrlf !== undefined ? [`\tautocrlf = ${quoteValue(settings.autocrlf)}`] : []),
    ...(settings.eol !== undefined ? [`\teol = ${quoteValue(settings.eol)}`] : []),
  ];
  if (lines.length === 0) return undefined;
  const file = join(dir, "user-global.gitconfig");
  writeFileSync(file, `[core]\n${lines.join("\n")}\n`, { mode: 0o600 });
  return file;
}
