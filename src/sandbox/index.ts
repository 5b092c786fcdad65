export {
  Sandbox,
  sandboxFromEnv,
  removeStaleScratch,
  removeStaleSandboxState,
  scratchRemoved,
  defaultMasks,
  SCRATCH_PREFIX,
  type SandboxStep,
  type SandboxedResult,
  type HostView,
} from "./sandbox.js";
export {
  sandboxSettingsFromEnv,
  SandboxSettingsError,
  DEFAULT_LOG_CAP_MB,
  DEFAULT_MAX_PROCESSES,
  DEFAULT_MEMORY_MB,
  type SandboxSettings,
} from "./settings.js";
export { probeSandbox, assertSandboxUsable, SandboxUnavailableError, UNSANDBOXED_WARNING, HOST_NETWORK_WARNING, type SandboxStatus } from "./probe.js";
export { probeSandboxCached, probeCachePath, probeHostOf, type ProbeHost } from "./probe-cache.js";
export { bwrapArgs, hostSystemEntries, SANDBOX_UID, SANDBOX_GID, type SandboxView, type SystemEntry } from "./bwrap-args.js";
export { gitReadPaths, guardGitLink } from "./git-view.js";
export { isInside } from "./git-view.js";
export { netSettingsFromEnv, egressAllows, type NetSettings, type NetAllowEntry } from "./net-settings.js";
export { etcSecretMasks, type Mask } from "./secret-files.js";
export { endpointsOf, findNetTools, type NetTools } from "./net-launch.js";
export { startEgressProxy, type EgressProxy } from "./egress-proxy.js";
export type { NetPolicy } from "./net-step.js";
export { sparesMade, dropSpares, readySpares, sparesTaken, SPARE_STOCK } from "./net-spares.js";
export { findProgramIn } from "./programs.js";
export { hostRustupHome } from "./rustup.js";
