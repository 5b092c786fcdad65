/**
 * What the webhook door shed and what the redelivery sweeps did, as the status page shows it
 * (`GET /harness`, `/harness/status.json`): the shed count, the newest shed delivery ids and the
 * sweeps' state. Bounded: the ids are those of shed deliveries whose signature verified (only
 * GitHub can sign), and still few, and each cut short.
 */
import type { ShedLedger } from "./door-shed.js";
import type { SweepState } from "./redelivery.js";

/** Shed delivery ids shown (the newest). */
export const DOOR_IDS_SHOWN = 50;
/** Characters of a shed delivery id shown (GitHub's are 36). */
export const DOOR_ID_CHARS = 80;

/** The `door` of the status report (`schemas/status-webhook-door.schema.json`). */
export interface DoorStatus {
  shed: {
    /** Deliveries answered 503 since the App started. */
    total: number;
    /** Something was shed in the last window; a sweep follows once a window passes without. */
    shedding: boolean;
    /** The newest shed delivery ids whose signature verified, newest first, as their `X-GitHub-Delivery` headers gave them. */
    recentIds: string[];
  };
  /** Absent when the App does not ask for redeliveries. */
  redelivery?: SweepState;
}

/** The door's status from the ledger and the sweeper's state. */
export function doorStatus(shed: Pick<ShedLedger, "total" | "shedding" | "recentIds">, redelivery?: SweepState): DoorStatus {
  const recentIds = shed
    .recentIds()
    .slice(-DOOR_IDS_SHOWN)
    .reverse()
    .map((id) => (id.length > DOOR_ID_CHARS ? `${id.slice(0, DOOR_ID_CHARS - 1)}…` : id));
  return { shed: { total: shed.total, shedding: shed.shedding, recentIds }, ...(redelivery ? { redelivery } : {}) };
}
