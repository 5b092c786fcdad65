/**
 * Fake package managers for provisioning tests: executables named pnpm, npm and yarn that
 * record their argv, working directory and environment instead of installing anything.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFiles } from "../support/tmp.js";

/** A script recording `$0 "$@"`, `pwd` and `env` into `$RECORD_DIR/<name>.{argv,cwd,env}`. */
const RECORDER = `#!/bin/sh
name=$(basename "$0")
: > "$RECORD_DIR/$name.argv"
for arg in "$0" "$@"; do printf '%s\\n' "$arg" >> "$RECORD_DIR/$name.argv"; done
pwd > "$RECORD_DIR/$name.cwd"
env > "$RECORD_DIR/$name.env"
echo "$name ran"
`;

/** Writes fake pnpm, npm and yarn into `binDir`. */
export function writeFakeTools(binDir: string): void {
  writeFiles(binDir, Object.fromEntries(["pnpm", "npm", "yarn"].map((name) => [name, { content: RECORDER, mode: 0o755 }])));
}

/** The PATH that finds the fakes first. */
export function fakePath(binDir: string): string {
  return `${binDir}:${process.env.PATH ?? "/usr/bin:/bin"}`;
}

/** What a fake recorded: its argv (argv[0] is the path it ran as), cwd and environment. */
export function recorded(recordDir: string, name: string): { argv: string[]; cwd: string; env: Record<string, string> } {
  const read = (suffix: string): string => readFileSync(join(recordDir, `${name}.${suffix}`), "utf8");
  const argv = read("argv").replace(/\n$/, "").split("\n");
  const env: Record<string, string> = {};
  for (const line of read("env").split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return { argv, cwd: read("cwd").trim(), env };
}
