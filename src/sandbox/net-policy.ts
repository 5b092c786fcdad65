/**
 * What a networked step's own network namespace lets through, as `ip rule` lines. The rules
 * are set by a process that owns the namespace before bubblewrap starts the step in a user
 * namespace of its own with no capabilities, so nothing the step runs can change them. A
 * refused destination fails at once (`prohibit`: EACCES from connect), never by a timeout.
 */
import { isIP } from "node:net";

/** Ranges of the host's side a step never reaches unless the operator opens them. */
export const BLOCKED_V4 = ["127.0.0.0/8", "169.254.0.0/16", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"];
export const BLOCKED_V6 = ["::1/128", "fe80::/10", "fc00::/7"];

/** Where the step's own user-mode network is reached from inside: its resolver and the host's loopback (when mapped). */
export interface NetEndpoints {
  /** The address the step's resolv.conf names; the user-mode stack forwards it to the host's resolver. */
  dns: string;
  /** The address at which the host's loopback ports are forwarded, seen from inside. */
  hostLoopback: string;
}

/** A destination opened for one step, resolved to addresses. */
export type OpenedDestination = { family: 4 | 6; cidr: string; port?: number };

/** The rules of one step's namespace: IPv4 and IPv6 `ip -batch` files. */
export interface NetRules {
  v4: string;
  v6: string;
}

/**
 * The rules for a step: the resolver and the opened destinations first, then the blocked
 * ranges, then (behind an egress proxy) everything else. Rules are looked up after the
 * namespace's own `local` table, so its own loopback and addresses stay its own.
 */
export function netRules(
  endpoints: NetEndpoints,
  opened: readonly OpenedDestination[],
  options: { proxyPorts: readonly number[]; blockAll: boolean },
): NetRules {
  const v4: string[] = [];
  const v6: string[] = [];
  const allow = (family: 4 | 6, cidr: string, port?: number, protocols: readonly string[] = ["tcp"]): void => {
    const target = family === 4 ? v4 : v6;
    if (port === undefined) target.push(`rule add pref 100 to ${cidr} lookup main`);
    else for (const protocol of protocols) target.push(`rule add pref 100 to ${cidr} ipproto ${protocol} dport ${port} lookup main`);
  };
  allow(4, `${endpoints.dns}/32`, 53, ["udp", "tcp"]);
  for (const port of options.proxyPorts) allow(4, `${endpoints.hostLoopback}/32`, port);
  for (const destination of opened) allow(destination.family, destination.cidr, destination.port);
  for (const cidr of BLOCKED_V4) v4.push(`rule add pref 200 to ${cidr} prohibit`);
  for (const cidr of BLOCKED_V6) v6.push(`rule add pref 200 to ${cidr} prohibit`);
  if (options.blockAll) {
    v4.push("rule add pref 300 to 0.0.0.0/0 prohibit");
    v6.push("rule add pref 300 to ::/0 prohibit");
  }
  return { v4: `${v4.join("\n")}\n`, v6: `${v6.join("\n")}\n` };
}

/** Whether an address is on the loopback of its family. */
export function isLoopback(address: string): boolean {
  return isIP(address) === 4 ? address.startsWith("127.") : address === "::1";
}

function v4Number(address: string): number {
  return address.split(".").reduce((value, part) => value * 256 + Number(part), 0);
}

function v6Bits(address: string): bigint {
  let text = address.replace(/%.*$/, "");
  // An embedded IPv4 tail (::ffff:10.0.0.1) is two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1]) {
    const value = v4Number(v4[1]);
    text = `${text.slice(0, -v4[1].length)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const first = head === "" ? [] : head.split(":");
  const last = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? first : [...first, ...Array<string>(Math.max(0, 8 - first.length - last.length)).fill("0"), ...last];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group || "0", 16)), 0n);
}

/** Whether `address` is inside `cidr` (same family only). */
export function inCidr(address: string, cidr: string): boolean {
  const [base = "", bits = ""] = cidr.split("/");
  const family = isIP(address);
  if (family === 0 || family !== isIP(base)) return false;
  const prefix = Number(bits);
  if (family === 4) {
    if (prefix === 0) return true;
    const mask = (0xffffffff << (32 - prefix)) >>> 0;
    return (v4Number(address) & mask) >>> 0 === (v4Number(base) & mask) >>> 0;
  }
  const shift = BigInt(128 - prefix);
  return v6Bits(address) >> shift === v6Bits(base) >> shift;
}

/** The IPv4 address an IPv4-mapped IPv6 address stands for, or the address itself. */
function unmapped(address: string): string {
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return match?.[1] ?? address;
}

/**
 * Whether a step may reach `address` on `port`: not in a blocked range, or opened for it (the
 * egress proxy asks this before it connects for a step, so a name that resolves to the host's
 * private side is refused there too).
 */
export function reachable(address: string, port: number, opened: readonly OpenedDestination[]): boolean {
  const plain = unmapped(address);
  const family = isIP(plain);
  if (family === 0) return false;
  const blocked = (family === 4 ? BLOCKED_V4 : BLOCKED_V6).some((cidr) => inCidr(plain, cidr));
  return !blocked || opened.some((destination) => inCidr(plain, destination.cidr) && (destination.port === undefined || destination.port === port));
}
