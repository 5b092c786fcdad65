/**
 * The App's webhook as the fake sends it: each delivery is POSTed to the App's webhook URL,
 * signed, and recorded with the status code the App answered (0 when it could not be reached),
 * as GitHub's `GET /app/hook/deliveries` lists them. A redelivery (`POST …/attempts`) sends the
 * same event again under the same GUID. GitHub itself never retries a failed delivery.
 */
import { randomUUID } from "node:crypto";
import { signedDelivery } from "./webhooks.js";

/** GitHub waits this long for the App's answer. */
const DELIVERY_TIMEOUT_MS = 10_000;

export interface HookDeliveryRecord {
  id: number;
  guid: string;
  deliveredAt: string;
  redelivery: boolean;
  durationS: number;
  status: string;
  statusCode: number;
  event: string;
  action: string | null;
  installationId: number | null;
  repositoryId: number | null;
  payload: Record<string, unknown>;
}

export class HookDeliveries {
  /** The App's webhook URL; deliveries fail to connect until it is set. */
  url: string | undefined;
  /** Every delivery sent, oldest first. */
  readonly records: HookDeliveryRecord[] = [];
  private nextId = 1;
  private readonly sending = new Set<Promise<HookDeliveryRecord>>();

  constructor(private readonly secret: string) {}

  /** Sends one delivery of `event` and records it; resolves once the App answered (or failed to). */
  send(event: string, payload: Record<string, unknown>, guid: string = randomUUID(), redelivery = false): Promise<HookDeliveryRecord> {
    const sent = this.post(event, payload, guid, redelivery);
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
    return sent;
  }

  /** Sends delivery `id` again (a new delivery, same GUID); undefined when there is no such delivery. */
  redeliver(id: number): Promise<HookDeliveryRecord> | undefined {
    const original = this.records.find((record) => record.id === id);
    return original ? this.send(original.event, original.payload, original.guid, true) : undefined;
  }

  /** Resolves once no delivery is on its way. */
  async idle(): Promise<void> {
    while (this.sending.size > 0) await Promise.allSettled([...this.sending]);
  }

  private async post(event: string, payload: Record<string, unknown>, guid: string, redelivery: boolean): Promise<HookDeliveryRecord> {
    const id = this.nextId++;
    const delivery = signedDelivery(event, payload, this.secret, guid);
    const deliveredAt = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
    const started = performance.now();
    let statusCode = 0;
    let status = "failed to connect";
    if (this.url) {
      try {
        const response = await fetch(this.url, {
          method: "POST",
          headers: delivery.headers,
          body: delivery.body,
          signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
        });
        await response.arrayBuffer();
        statusCode = response.status;
        status = response.ok ? "OK" : `Invalid HTTP Response: ${response.status}`;
      } catch {
        status = "failed to connect";
      }
    }
    const record: HookDeliveryRecord = {
      id,
      guid,
      deliveredAt,
      redelivery,
      durationS: (performance.now() - started) / 1000,
      status,
      statusCode,
      event,
      action: typeof payload.action === "string" ? payload.action : null,
      installationId: (payload.installation as { id?: number } | undefined)?.id ?? null,
      repositoryId: (payload.repository as { id?: number } | undefined)?.id ?? null,
      payload,
    };
    this.records.push(record);
    return record;
  }
}

/** A delivery as `GET /app/hook/deliveries` shows it (GitHub's "Simple webhook delivery"). */
export function hookDeliveryJson(record: HookDeliveryRecord): Record<string, unknown> {
  return {
    id: record.id,
    guid: record.guid,
    delivered_at: record.deliveredAt,
    redelivery: record.redelivery,
    duration: record.durationS,
    status: record.status,
    status_code: record.statusCode,
    event: record.event,
    action: record.action,
    installation_id: record.installationId,
    repository_id: record.repositoryId,
    throttled_at: null,
  };
}
