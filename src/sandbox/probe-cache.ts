/**
 * The sandbox probe's answer kept per host in HARNESS_HOME, so a start (`harness run`, a worker)
 * does not launch bubblewrap twice just to learn what it learnt last time. The answer is keyed
 * by what it depends on: bubblewrap and the programs a step is launched with (path, size,
 * mtime: an upgrade changes them), the kernel release, and the sandbox's network mode. Only a
 * usable answer is kept: a host that refused is asked again at the next start, since its fix
 * (a sysctl, a package) need not change any of the key. A sandboxed step that fails to start
 * drops the answer, so the next start probes again.
 */
import { mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { release } from "node:os";
import { join } from "node:path";
import { writeFileAtomicSync } from "../files/index.js";
import { schemas } from "../schema/index.js";
import { probeSandbox, type SandboxStatus } from "./probe.js";
import type { Sandbox } from "./sandbox.js";

/** What the probe's answer depends on. */
export interface ProbeHost {
  kernel: string;
  netMode: string;
  pidsCgroups: boolean;
  programs: { name: string; path: string; size?: number; mtimeMs?: number }[];
}

interface ProbeRecord {
  version: 1;
  host: ProbeHost;
  status: { state: "on"; hostNetwork?: true };
  at: string;
}

/** Where a host's answer is kept: outside every folder a step is shown (HARNESS_HOME is masked). */
export function probeCachePath(harnessHome: string): string {
  return join(harnessHome, "host", "sandbox-probe.json");
}

/** The host as the probe's answer depends on it; `kernel` is the running kernel's release unless given. */
export function probeHostOf(sandbox: Sandbox, kernel: string = release()): ProbeHost {
  const { bwrap, prlimit, pidsCgroups } = sandbox.launchers;
  const tools = sandbox.netTools;
  const named: [string, string][] = [
    ["bwrap", bwrap],
    ["prlimit", prlimit],
    ...("missing" in tools ? tools.missing.map((name): [string, string] => [name, ""]) : [[tools.kind, tools.stack] as [string, string]]),
  ];
  const programs = named.map(([name, path]) => {
    try {
      const stat = statSync(path);
      return { name, path, size: stat.size, mtimeMs: Math.trunc(stat.mtimeMs) };
    } catch {
      // Absent (or a bare name): recorded as such, so installing it changes the key.
      return { name, path };
    }
  });
  return { kernel, netMode: sandbox.settings.net.mode, pidsCgroups, programs };
}

/** The kept answer for `host`, when the file is valid, of this version, and about the same host. */
function readCached(file: string, host: ProbeHost): SandboxStatus | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const record = schemas().parseValid<ProbeRecord>("sandbox-probe", text);
  if (record === undefined || JSON.stringify(record.host) !== JSON.stringify(host)) return undefined;
  return record.status;
}

/**
 * The sandbox's status on this host: the kept answer when the host is unchanged, otherwise a
 * fresh probe, whose usable answer replaces the file (atomically; a corrupt, foreign or stale
 * file is overwritten). Registers with `sandbox` so a step that fails to start drops the answer.
 */
export async function probeSandboxCached(sandbox: Sandbox, harnessHome: string, options: { kernel?: string } = {}): Promise<SandboxStatus> {
  if (!sandbox.settings.enabled) return probeSandbox(sandbox);
  const file = probeCachePath(harnessHome);
  const host = probeHostOf(sandbox, options.kernel);
  dropOnStartFailure(sandbox, file);
  const cached = readCached(file, host);
  if (cached !== undefined) return cached;
  const status = await probeSandbox(sandbox);
  if (status.state === "on") {
    const record: ProbeRecord = { version: 1, host, status, at: new Date().toISOString() };
    schemas().validate("sandbox-probe", record, file);
    try {
      mkdirSync(join(harnessHome, "host"), { recursive: true });
      // Not fsynced: losing it to a power cut costs one probe.
      writeFileAtomicSync(file, `${JSON.stringify(record)}\n`, { fsync: false });
    } catch {
      // A read-only home costs a probe per start, nothing more.
    }
  } else {
    forget(file);
  }
  return status;
}

/** The answer files each sandbox drops when a step fails to start (one listener per file, however often it is asked). */
const watched = new WeakMap<Sandbox, Set<string>>();

function dropOnStartFailure(sandbox: Sandbox, file: string): void {
  const files = watched.get(sandbox) ?? new Set<string>();
  watched.set(sandbox, files);
  if (files.has(file)) return;
  files.add(file);
  sandbox.onStartFailure(() => forget(file));
}

function forget(file: string): void {
  rmSync(file, { force: true });
}
