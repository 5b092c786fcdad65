/**
 * A preset CLI's successful start in the sandbox (`<cli> --version`), kept per host in
 * HARNESS_HOME, so that a story does not pay a sandbox launch and a CLI boot (hundreds of ms
 * for a Node bundle) to learn what the last story learnt. The answer is keyed by what it
 * depends on: the program PATH resolves to (its real path, size, mtime: an upgrade or a
 * reinstall changes them) and, for a script, its interpreter; the sandbox settings that decide
 * what a step sees; bubblewrap, the other launchers and the kernel. Only a start that
 * succeeded is kept: a failure is checked again at every story, since its fix (a folder
 * granted, a package installed elsewhere) need not change the key. A seat that then finds
 * the CLI not installed drops its entry, so the next story checks again.
 */
import { closeSync, mkdirSync, openSync, readFileSync, readSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import { writeFileAtomicSync } from "../files/index.js";
import { probeHostOf, type Sandbox } from "../sandbox/index.js";
import { schemas } from "../schema/index.js";
import { findOnPath } from "./preflight/index.js";

/** One file a start depends on: where PATH found it, where it really is, its size and mtime. */
interface FileId {
  path: string;
  realPath: string;
  size: number;
  mtimeMs: number;
}

/** What a CLI's start in the sandbox depends on. */
export interface AgentStartKey {
  program: FileId;
  interpreter?: FileId;
  sandbox: {
    enabled: boolean;
    readPaths: string[];
    writePaths: string[];
    kernel: string;
    launchers: { name: string; path: string; size?: number; mtimeMs?: number }[];
  };
}

interface StartsRecord {
  version: 1;
  starts: { program: string; key: AgentStartKey; at: string }[];
}

/** Where a host's kept starts live: outside every folder a step is shown (HARNESS_HOME is masked). */
export function agentStartsPath(harnessHome: string): string {
  return join(harnessHome, "host", "agent-starts.json");
}

function fileId(path: string): FileId | undefined {
  try {
    const realPath = realpathSync(path);
    const stat = statSync(realPath);
    return { path, realPath, size: stat.size, mtimeMs: Math.trunc(stat.mtimeMs) };
  } catch {
    return undefined;
  }
}

/** The interpreter a `#!` line names (`/usr/bin/env node` resolved on PATH), or undefined for a binary. */
function interpreterOf(realPath: string, searchPath: string): string | undefined {
  const head = Buffer.alloc(256);
  let read = 0;
  try {
    const fd = openSync(realPath, "r");
    try {
      read = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const text = head.subarray(0, read).toString("latin1");
  if (!text.startsWith("#!")) return undefined;
  const words = (text.slice(2).split("\n")[0] ?? "").trim().split(/\s+/);
  const first = words[0] ?? "";
  if (!isAbsolute(first)) return undefined;
  if (basename(first) !== "env") return first;
  // `#!/usr/bin/env -S node --flag`: the first word that is not an option is the program.
  const named = words.slice(1).find((word) => !word.startsWith("-"));
  if (named === undefined) return undefined;
  return named.includes("/") ? named : findOnPath(named, searchPath);
}

/**
 * What `program`'s start in `sandbox` depends on, or undefined when PATH does not find it (its
 * start is then checked, and fails, at every story). Costs a few `stat`s and one 256-byte read.
 */
export function agentStartKey(program: string, sandbox: Sandbox, options: { searchPath?: string; kernel?: string } = {}): AgentStartKey | undefined {
  const searchPath = options.searchPath ?? process.env.PATH ?? "";
  const found = findOnPath(program, searchPath);
  const id = found === undefined ? undefined : fileId(found);
  if (id === undefined) return undefined;
  const interpreterPath = interpreterOf(id.realPath, searchPath);
  const interpreter = interpreterPath === undefined ? undefined : fileId(interpreterPath);
  const host = probeHostOf(sandbox, options.kernel);
  return {
    program: id,
    ...(interpreter ? { interpreter } : {}),
    sandbox: {
      enabled: sandbox.settings.enabled,
      readPaths: [...sandbox.settings.readPaths],
      writePaths: [...sandbox.settings.writePaths],
      kernel: host.kernel,
      launchers: host.programs,
    },
  };
}

/** The kept starts, or none when the file is absent, corrupt or of another version (it is rewritten at the next keep). */
function readStarts(harnessHome: string): StartsRecord["starts"] {
  let text: string;
  try {
    text = readFileSync(agentStartsPath(harnessHome), "utf8");
  } catch {
    return [];
  }
  return schemas().parseValid<StartsRecord>("agent-starts", text)?.starts ?? [];
}

function writeStarts(harnessHome: string, starts: StartsRecord["starts"]): void {
  const file = agentStartsPath(harnessHome);
  const record: StartsRecord = { version: 1, starts };
  schemas().validate("agent-starts", record, file);
  try {
    mkdirSync(dirname(file), { recursive: true });
    // Not fsynced: losing it to a power cut costs one `--version` per CLI. Two stories writing at
    // once each write a whole file (atomic rename); the one that loses costs the same.
    writeFileAtomicSync(file, `${JSON.stringify(record)}\n`, { fsync: false });
  } catch {
    // A read-only home costs a start check per story, nothing more.
  }
}

/** Whether `program` last started on this host with the same `key`. */
export function agentStartKept(harnessHome: string, program: string, key: AgentStartKey): boolean {
  const kept = readStarts(harnessHome).find((entry) => entry.program === program);
  return kept !== undefined && JSON.stringify(kept.key) === JSON.stringify(key);
}

/** Keeps `program`'s successful start under `key`, replacing what was kept for it. */
export function keepAgentStart(harnessHome: string, program: string, key: AgentStartKey, now: Date = new Date()): void {
  const others = readStarts(harnessHome).filter((entry) => entry.program !== program);
  writeStarts(harnessHome, [...others, { program, key, at: now.toISOString() }].slice(-32));
}

/** Drops what was kept of `program`'s start, so the next story checks it again. */
export function forgetAgentStart(harnessHome: string, program: string): void {
  const starts = readStarts(harnessHome);
  const others = starts.filter((entry) => entry.program !== program);
  if (others.length !== starts.length) writeStarts(harnessHome, others);
}
