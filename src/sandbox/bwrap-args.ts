/**
 * The bubblewrap command line for one sandboxed step, built from a description of what the
 * step may see. Pure: the host's layout comes in as data ({@link hostSystemEntries} reads it).
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { join } from "node:path";

/** The uid and gid repository code runs as inside the sandbox, whoever runs the App. */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;

/** A top-level entry of the host's root shown in the sandbox: a read-only folder or a symlink. */
export type SystemEntry = { kind: "ro-bind"; path: string } | { kind: "symlink"; path: string; target: string };

/** Everything one step may see. Paths are absolute; they appear at the same place inside. */
export interface SandboxView {
  cwd: string;
  /** The step's private HOME and TMPDIR, made fresh for it. */
  home: string;
  tmp: string;
  writable: readonly string[];
  readable: readonly string[];
  /** Files or folders that are hidden (replaced by an empty file or folder) wherever they would be visible. */
  masked: readonly { path: string; directory: boolean }[];
  network: boolean;
  system: readonly SystemEntry[];
  /** A file shown as /etc/resolv.conf: the resolver of a step's own network namespace. */
  resolvConf?: string;
}

/** Root entries a step may read: programs, libraries and system configuration, never homes or data. */
const SYSTEM_DIRS = ["usr", "etc", "opt", "bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/** The system part of the view as the host has it (merged-/usr symlinks stay symlinks). */
export function hostSystemEntries(root = "/"): SystemEntry[] {
  const entries: SystemEntry[] = [];
  for (const name of SYSTEM_DIRS) {
    const path = join(root, name);
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) entries.push({ kind: "symlink", path, target: readlinkSync(path) });
      else if (stat.isDirectory()) entries.push({ kind: "ro-bind", path });
    } catch {
      // Not on this host.
    }
  }
  // Name resolution often lives outside /etc (systemd-resolved keeps it under /run).
  try {
    const resolv = realpathSync(join(root, "etc", "resolv.conf"));
    if (!SYSTEM_DIRS.some((name) => resolv.startsWith(join(root, name) + "/"))) entries.push({ kind: "ro-bind", path: resolv });
  } catch {
    // No resolver configuration.
  }
  return entries;
}

type Mount = { path: string; kind: "rw" | "ro" | "mask-dir" | "mask-file" };
const RANK: Record<Mount["kind"], number> = { rw: 3, ro: 2, "mask-dir": 1, "mask-file": 1 };

/**
 * Mounts in an order where a folder is mounted before anything inside it, so a masked folder
 * can still show a step's own folder inside it. On the same path an explicit bind wins over a
 * mask, and writable over read-only.
 */
function orderedMounts(view: SandboxView): Mount[] {
  const byPath = new Map<string, Mount>();
  const add = (mount: Mount): void => {
    const existing = byPath.get(mount.path);
    if (!existing || RANK[mount.kind] > RANK[existing.kind]) byPath.set(mount.path, mount);
  };
  for (const mask of view.masked) add({ path: mask.path, kind: mask.directory ? "mask-dir" : "mask-file" });
  for (const path of view.readable) add({ path, kind: "ro" });
  for (const path of [...view.writable, view.home, view.tmp]) add({ path, kind: "rw" });
  return [...byPath.values()].sort((a, b) => a.path.split("/").length - b.path.split("/").length || a.path.localeCompare(b.path));
}

function mountArgs(mount: Mount): string[] {
  if (mount.kind === "rw") return ["--bind", mount.path, mount.path];
  if (mount.kind === "ro") return ["--ro-bind", mount.path, mount.path];
  if (mount.kind === "mask-dir") return ["--tmpfs", mount.path];
  return ["--ro-bind", "/dev/null", mount.path];
}

/**
 * The arguments of `bwrap` (without the program) for `view`: new user, pid, ipc and uts
 * namespaces (and network unless the step has it: a networked step is already in a network
 * namespace of its own, made by its launcher), an unprivileged uid, no capabilities, its
 * own session, gone when its parent dies; the system read-only, a fresh /proc, /dev and /tmp,
 * and only the view's folders besides. Ends with `--`.
 */
export function bwrapArgs(view: SandboxView): string[] {
  const args = [
    "--unshare-user",
    "--uid",
    String(SANDBOX_UID),
    "--gid",
    String(SANDBOX_GID),
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--hostname",
    "harness-sandbox",
    ...(view.network ? [] : ["--unshare-net"]),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
  ];
  for (const entry of view.system) {
    if (entry.kind === "symlink") args.push("--symlink", entry.target, entry.path);
    else args.push("--ro-bind", entry.path, entry.path);
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  if (view.resolvConf !== undefined) args.push("--ro-bind", view.resolvConf, "/etc/resolv.conf");
  for (const mount of orderedMounts(view)) args.push(...mountArgs(mount));
  args.push("--chdir", view.cwd, "--");
  return args;
}
