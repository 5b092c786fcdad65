/**
 * The webhook door: signature and size checks, load shedding (per client and in total), the
 * answer budget, the redelivery sweep of what was shed, and the door's status for `GET /harness`.
 */
export {
  guardWebhooks,
  signatureMatches,
  MAX_WEBHOOK_BYTES,
  SHED_RETRY_AFTER_SECONDS,
  type NodeMiddleware,
  type WebhookGuardOptions,
} from "./webhook-guard.js";
export { ClientSlots, clientKey, defaultMaxInflightPerClient, DEFAULT_CLIENT_SHARE } from "./door-clients.js";
export { drainVerifying } from "./shed-drain.js";
export { ShedLedger, DEFAULT_MAX_INFLIGHT, SHED_LOG_EVERY_MS, SHED_IDS_KEPT, SHED_IDS_LOGGED, type ShedClock, type ShedLedgerOptions } from "./door-shed.js";
export { withinBudget, HANDLER_BUDGET_MS } from "./answer-budget.js";
export { appSecretValues } from "./app-secrets.js";
export {
  RedeliverySweeper,
  toRedeliver,
  nextCursor,
  REDELIVER_WITHIN_MS,
  SWEEP_MAX_PAGES,
  ASKED_KEPT,
  type HookDelivery,
  type RedeliveryOptions,
  type SweepResult,
  type SweepState,
} from "./redelivery.js";
export { doorStatus, DOOR_IDS_SHOWN, DOOR_ID_CHARS, type DoorStatus } from "./door-status.js";
