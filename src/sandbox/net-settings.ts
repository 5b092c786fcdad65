/**
 * The network policy of networked steps, as the operator sets it: `HARNESS_SANDBOX_NET`
 * (`namespace`, the default, or `host`), `HARNESS_NET_ALLOW` (destinations opened in the
 * namespace) and `HARNESS_EGRESS_ALLOW` (host names reachable through the filtering proxy).
 */
import { isIP } from "node:net";
import { SandboxSettingsError } from "./settings-error.js";

/** A destination the operator opens: a range of addresses, or one port of a host. */
export type NetAllowEntry = { kind: "cidr"; family: 4 | 6; address: string; prefix: number } | { kind: "port"; host: string; port: number };

/** How networked steps reach the network. */
export interface NetSettings {
  /** `namespace`: their own network namespace (the default); `host`: the host's network (an operator's opt-out). */
  mode: "namespace" | "host";
  allow: readonly NetAllowEntry[];
  /** Host names the egress proxy lets through; empty when steps reach the internet directly. */
  egressAllow: readonly string[];
}

const HOST_LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Whether `name` is a DNS host name (labels of letters, digits, `-` and `_`). */
function isHostName(name: string): boolean {
  return name.length > 0 && name.length <= 253 && name.split(".").every((label) => HOST_LABEL.test(label));
}

function list(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

/** Parses one `HARNESS_NET_ALLOW` entry; throws naming the variable. */
function allowEntry(entry: string, raw: string): NetAllowEntry {
  const fail = (reason: string): never => {
    throw new SandboxSettingsError("HARNESS_NET_ALLOW", raw, `must list CIDRs or host:port separated by ',' (${entry}: ${reason})`);
  };
  const slash = entry.indexOf("/");
  if (slash >= 0) {
    const address = entry.slice(0, slash);
    const bits = entry.slice(slash + 1);
    const family = isIP(address);
    if (family === 0) return fail("not an IP address before '/'");
    const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (!(prefix >= 0 && prefix <= (family === 4 ? 32 : 128))) return fail(`prefix length must be 0-${family === 4 ? 32 : 128}`);
    if (family === 4 && address.startsWith("127.")) return fail("loopback opens only with a port (127.0.0.1:PORT)");
    if (family === 6 && address === "::1") return fail("loopback opens only with a port ([::1]:PORT)");
    return { kind: "cidr", family: family as 4 | 6, address, prefix };
  }
  const bare = isIP(entry);
  if (bare !== 0) {
    if (entry.startsWith("127.") || entry === "::1") return fail("loopback opens only with a port (127.0.0.1:PORT)");
    return { kind: "cidr", family: bare as 4 | 6, address: entry, prefix: bare === 4 ? 32 : 128 };
  }
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(entry);
  if (!match) return fail("expected a CIDR (10.1.0.0/16), an address, or host:port");
  const host = (match[1] ?? "").replace(/^\[(.*)\]$/, "$1").toLowerCase();
  const port = Number(match[2]);
  if (!(port >= 1 && port <= 65535)) return fail("port must be 1-65535");
  if (isIP(host) === 0 && !isHostName(host)) return fail("not an address or a host name");
  return { kind: "port", host, port };
}

/** Parses one `HARNESS_EGRESS_ALLOW` entry: a host name, or `*.` and a domain for its subdomains. */
function egressEntry(entry: string, raw: string): string {
  const name = entry.toLowerCase();
  const domain = name.startsWith("*.") ? name.slice(2) : name;
  if (!isHostName(domain) && isIP(domain) === 0) {
    throw new SandboxSettingsError("HARNESS_EGRESS_ALLOW", raw, `must list host names separated by ',' (${entry} is not a host name)`);
  }
  return name;
}

/** Reads the network settings; throws {@link SandboxSettingsError} naming the variable that cannot be used. */
export function netSettingsFromEnv(env: NodeJS.ProcessEnv): NetSettings {
  const mode = (env.HARNESS_SANDBOX_NET ?? "").trim().toLowerCase();
  if (mode !== "" && mode !== "namespace" && mode !== "host") {
    throw new SandboxSettingsError("HARNESS_SANDBOX_NET", env.HARNESS_SANDBOX_NET ?? "", "must be 'namespace' (the default) or 'host'");
  }
  const allowRaw = env.HARNESS_NET_ALLOW ?? "";
  const egressRaw = env.HARNESS_EGRESS_ALLOW ?? "";
  return {
    mode: mode === "host" ? "host" : "namespace",
    allow: list(allowRaw).map((entry) => allowEntry(entry, allowRaw)),
    egressAllow: list(egressRaw).map((entry) => egressEntry(entry, egressRaw)),
  };
}

/** Whether the egress proxy lets `host` through: named exactly, or under a `*.domain` entry. */
export function egressAllows(allowed: readonly string[], host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return allowed.some((entry) => (entry.startsWith("*.") ? name.endsWith(entry.slice(1)) : name === entry));
}
