/**
 * The host's secret files under /etc, which a step must not read although /etc is visible.
 * The sandbox user is an ordinary uid inside, but when the App runs as root it is root's uid
 * outside, so file permissions alone do not keep `/etc/shadow-` from it. Two rules together:
 * the files known to hold secrets wherever they are readable, and every entry of /etc that an
 * ordinary user of the host could not read (no read permission for "others"), which is how a
 * distribution or an administrator marks a file as secret (a Redis `requirepass`, a database's
 * `pg_hba.conf`, TLS private keys).
 */
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** A file or folder hidden from steps: replaced by an empty file or an empty folder. */
export interface Mask {
  path: string;
  directory: boolean;
}

/** Files and folders of /etc known to hold secrets, masked even where the host left them world-readable. */
const KNOWN_SECRETS = [
  "shadow",
  "shadow-",
  "gshadow",
  "gshadow-",
  "security/opasswd",
  "sudoers",
  "sudoers.d",
  "ssl/private",
  "pki/tls/private",
  "krb5.keytab",
  "ppp/chap-secrets",
  "ppp/pap-secrets",
  "ipsec.secrets",
  "wireguard",
  "letsencrypt",
  "NetworkManager/system-connections",
  "credstore",
  "credstore.encrypted",
];

/** How deep below /etc the permission scan looks (configuration trees are shallow). */
const MAX_DEPTH = 6;
/** Most entries the scan visits: an enormous /etc must not stall the App's start. */
const MAX_ENTRIES = 50_000;

/**
 * The masks for the secrets of `etc` (the host's /etc by default): the known ones that exist,
 * the private host keys of SSH (`ssh/ssh_host_*_key`), and every entry not readable by others
 * (a folder is masked whole and not looked into). Symlinks are left alone: their targets are
 * judged where they are.
 */
export function etcSecretMasks(etc = "/etc"): Mask[] {
  const masks = new Map<string, Mask>();
  const add = (path: string): void => {
    try {
      const stat = lstatSync(path);
      if (stat.isDirectory() || stat.isFile()) masks.set(path, { path, directory: stat.isDirectory() });
    } catch {
      // Not on this host.
    }
  };
  for (const name of KNOWN_SECRETS) add(join(etc, name));
  try {
    for (const name of readdirSync(join(etc, "ssh"))) if (name.startsWith("ssh_host_") && name.endsWith("_key")) add(join(etc, "ssh", name));
  } catch {
    // No SSH server configuration.
  }
  let visited = 0;
  const scan = (dir: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      visited += 1;
      if (visited > MAX_ENTRIES) return;
      const path = join(dir, name);
      let stat;
      try {
        stat = lstatSync(path);
      } catch {
        continue;
      }
      if (!stat.isDirectory() && !stat.isFile()) continue;
      if ((stat.mode & 0o004) === 0) masks.set(path, { path, directory: stat.isDirectory() });
      else if (stat.isDirectory() && depth < MAX_DEPTH && !masks.has(path)) scan(path, depth + 1);
    }
  };
  scan(etc, 1);
  return [...masks.values()];
}
