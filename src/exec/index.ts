export { exec, execShell, succeeded, DEFAULT_KILL_GRACE_MS, DEFAULT_CAPTURE_BYTES, type ExecOptions, type ExecResult } from "./exec.js";
export { ExecLogError } from "./log.js";
export { terminateGroup, groupAlive } from "./group.js";
export { buildChildEnv, isNeverPassed, BASE_ENV_ALLOWLIST, NEVER_PASSED, type EnvSpec } from "./env.js";
export { TailBuffer, tailText, keepLastBytes, DEFAULT_TAIL_BYTES, DEFAULT_TAIL_LINES } from "./tail.js";
export { identityOf, isRunning, selfIdentity, UNKNOWN_START, type ProcessIdentity } from "./identity.js";
export { runInStepScope, currentStepScope, type StepScope } from "./scope.js";
export { ProcessLedger, reapOrphans, type ReapedProcess } from "./ledger.js";
export { treeCpuMs, cpuMsOfStat, watchIdle, AGENT_IDLE, type IdleWatch, type IdleOptions } from "./tree-cpu.js";
