/**
 * Webhook requests in flight per client, so that one sender cannot hold every slot of the door:
 * with `HARNESS_MAX_INFLIGHT` shared by all, a few hundred slow bodies from one host once shed
 * every delivery of GitHub's. A client is its remote address, and for IPv6 its /64 (the block a
 * single host is usually given, whose addresses it may pick at will). The `X-Forwarded-For` of
 * a proxy is not read: anyone can write it. Behind a reverse proxy every request comes from the
 * proxy's address, so the operator raises the per-client limit to the global one there.
 */

/** The share of the door's slots one client may hold when `HARNESS_MAX_INFLIGHT_PER_CLIENT` is unset. */
export const DEFAULT_CLIENT_SHARE = 4;

/** The per-client limit for a door of `maxInflight` slots: a quarter of them, at least one. */
export function defaultMaxInflightPerClient(maxInflight: number): number {
  return Math.max(1, Math.ceil(maxInflight / DEFAULT_CLIENT_SHARE));
}

/** The client a remote address belongs to: an IPv4 address as it is (also when IPv4-mapped), an IPv6 address's /64. */
export function clientKey(address: string | undefined): string {
  if (!address) return "(unknown)";
  const plain = address.split("%")[0] ?? address; // an IPv6 zone (fe80::1%eth0) names the interface, not the host
  if (!plain.includes(":")) return plain;
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(plain)) return plain.slice("::ffff:".length);
  const [head = "", tail] = plain.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group || "0", 16).toString(16))
    .join(":")}::/64`;
}

/** Counts requests in flight per client; a client at its limit is refused a slot. */
export class ClientSlots {
  private readonly held = new Map<string, number>();

  constructor(private readonly perClient: number) {}

  /** Takes a slot for `client`; false when it holds its limit already. */
  take(client: string): boolean {
    const count = this.held.get(client) ?? 0;
    if (count >= this.perClient) return false;
    this.held.set(client, count + 1);
    return true;
  }

  /** Gives a slot back; a client with none left is forgotten, so the map holds only clients in flight. */
  give(client: string): void {
    const count = (this.held.get(client) ?? 1) - 1;
    if (count <= 0) this.held.delete(client);
    else this.held.set(client, count);
  }

  /** Clients holding a slot now. */
  get clients(): number {
    return this.held.size;
  }
}
