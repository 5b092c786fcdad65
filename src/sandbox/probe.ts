/**
 * Whether the sandbox can work on this host. The runner asks before it starts a story: where
 * bubblewrap is missing or the host refuses user namespaces, no story starts, and the message
 * names the fix.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeTree, SCRATCH_PREFIX, type Sandbox } from "./sandbox.js";
import type { FailureClass } from "../failure/index.js";

/** The sandbox cannot run here; stories are refused with this message. */
export class SandboxUnavailableError extends Error {
  readonly failureClass = "environment" satisfies FailureClass;
  constructor(message: string) {
    super(message);
    this.name = "SandboxUnavailableError";
  }
}

/**
 * How the sandbox stands: usable (with `hostNetwork` when the operator lets networked steps
 * share the host's network), switched off by the operator, or unusable (with the fix).
 */
export type SandboxStatus = { state: "on"; hostNetwork?: true } | { state: "off" } | { state: "unavailable"; reason: string };

const NET_OPT_OUT =
  "or set HARNESS_SANDBOX_NET=host to let networked steps share the host's network, its loopback and private addresses included (not recommended)";

/** Whether networked steps can get a network namespace of their own; the fix when they cannot. */
async function probeNetwork(sandbox: Sandbox, dir: string): Promise<string | undefined> {
  const tools = sandbox.netTools;
  if ("missing" in tools)
    return `networked steps (provisioning, agents, suites with test.network) cannot get a network namespace of their own: ${tools.missing.join(", ")} not found; install it, ${NET_OPT_OUT}`;
  const result = await sandbox.run(["true"], { cwd: dir, timeoutMs: 30_000 }, { purpose: "suite", network: true, writable: [dir] });
  if (result.exitCode === 0) return undefined;
  const said = result.tail.trim().split("\n").slice(-3).join(" / ") || result.spawnError || `exit ${result.exitCode ?? "none"}`;
  return `networked steps cannot get a network namespace of their own with ${tools.kind} (${said}): the host must let the App open /dev/net/tun and create user and network namespaces; ${NET_OPT_OUT}`;
}

const OPT_OUT = "or set HARNESS_SANDBOX=off to run repository code unsandboxed (not recommended)";

/** Runs `true` in a sandbox like a step's; describes what failed in terms an operator can act on. */
export async function probeSandbox(sandbox: Sandbox): Promise<SandboxStatus> {
  if (!sandbox.settings.enabled) return { state: "off" };
  const dir = mkdtempSync(join(tmpdir(), `${SCRATCH_PREFIX}${process.pid}-probe-`));
  try {
    const result = await sandbox.run(["true"], { cwd: dir, timeoutMs: 30_000 }, { purpose: "suite", network: false, writable: [dir] });
    if (result.exitCode === 0) {
      if (sandbox.settings.net.mode === "host") return { state: "on", hostNetwork: true };
      const netFailure = await probeNetwork(sandbox, dir);
      return netFailure === undefined ? { state: "on" } : { state: "unavailable", reason: netFailure };
    }
    const notFound =
      (result.spawnError !== undefined && /^ENOENT: program /.test(result.spawnError)) || (result.exitCode === 127 && /not found/.test(result.tail));
    if (notFound) {
      return { state: "unavailable", reason: `bubblewrap is not installed (install it: apt-get install -y bubblewrap), ${OPT_OUT}` };
    }
    const said = result.tail.trim().split("\n").slice(-2).join(" / ") || result.spawnError || `exit ${result.exitCode ?? "none"}`;
    return {
      state: "unavailable",
      reason: `bubblewrap cannot create its namespaces here (${said}): allow user namespaces on the host (sysctl user.max_user_namespaces > 0, and kernel.apparmor_restrict_unprivileged_userns=0 where AppArmor restricts them), or run the container with --security-opt seccomp=unconfined --security-opt systempaths=unconfined (and apparmor=unconfined where AppArmor runs); ${OPT_OUT}`,
    };
  } finally {
    removeTree(dir);
  }
}

/**
 * Throws {@link SandboxUnavailableError} unless the sandbox works or is switched off; `probe`
 * is how it is asked (the per-host cached answer, where the caller has a HARNESS_HOME).
 */
export async function assertSandboxUsable(sandbox: Sandbox, probe: (sandbox: Sandbox) => Promise<SandboxStatus> = probeSandbox): Promise<SandboxStatus> {
  const status = await probe(sandbox);
  if (status.state === "unavailable") throw new SandboxUnavailableError(`The sandbox cannot run on this host, so no story is started: ${status.reason}.`);
  return status;
}

/** The start-up warning printed when the operator let networked steps share the host's network. */
export const HOST_NETWORK_WARNING =
  "HARNESS_SANDBOX_NET=host: networked steps (provisioning, agents, suites with test.network) share the host's NETWORK: its loopback (the App's port, Redis), link-local (cloud metadata) and private addresses are in their reach. Every story's check run says so.";

/** The start-up warning printed when the operator switched the sandbox off. */
export const UNSANDBOXED_WARNING =
  "HARNESS_SANDBOX=off: repository code (provisioning, agents, test suites) runs UNSANDBOXED, as the App's own user, with the App's files and network in reach. Every story's check run is marked \"unsandboxed\".";
