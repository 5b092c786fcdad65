export { provisionWorktree, assertProvisioned, provisionCacheEnv, type ProvisionArgs, type ProvisionOutcome } from "./provision.js";
export { DEFAULT_PROVISION_TIMEOUT_MS, validateProvisionConfig, ProvisionConfigError, type ProvisionConfig, type ProvisionSettings } from "./config.js";
export { resolveProvisionCommand, PROVISION_HOOK, type ProvisionSource, type ResolvedProvision } from "./resolve.js";
export { snapshotsDir, SNAPSHOTS_KEPT } from "./snapshot.js";
export { PROVISION_RECEIPT, provisionReceiptPath, readReceipt, isProvisioned, writeReceipt, excludeReceipt, type ProvisionReceipt } from "./receipt.js";
export { WorkspaceProvisionError, type ProvisionFailure } from "./error.js";
export { venvEnv } from "./venv.js";
export { VENV_DIR } from "./python.js";
