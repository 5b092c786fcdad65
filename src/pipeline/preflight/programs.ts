/** Whether the program a command names can start: found on PATH, or an executable file. */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/** Words `/bin/sh` runs itself: a template starting with one names no program to look for. */
const SHELL_WORDS = new Set([
  ".",
  ":",
  "[",
  "alias",
  "break",
  "case",
  "cd",
  "command",
  "continue",
  "eval",
  "exec",
  "exit",
  "export",
  "for",
  "if",
  "read",
  "return",
  "set",
  "shift",
  "source",
  "test",
  "trap",
  "true",
  "false",
  "ulimit",
  "umask",
  "unset",
  "until",
  "wait",
  "while",
  "{",
  "(",
]);

/** True for an executable regular file. */
export function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The absolute path of `name` on `searchPath`, or undefined. Relative PATH entries are ignored. */
export function findOnPath(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The program a shell command template starts, when it can be told without running a shell:
 * leading `NAME=value` assignments are skipped; a shell word, a quoted or substituted first
 * word gives undefined (the shell decides, preflight cannot).
 */
export function firstProgram(template: string): string | undefined {
  const words = template.trim().split(/\s+/);
  for (const word of words) {
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) continue;
    if (SHELL_WORDS.has(word) || !/^[A-Za-z0-9_./+@%-]+$/.test(word)) return undefined;
    return word;
  }
  return undefined;
}
