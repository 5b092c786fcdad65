/**
 * The launcher of a networked step: a network namespace of its own, joined to the internet
 * by a user-mode network stack (pasta, from the passt package, or slirp4netns), its `ip rule`s
 * set while the launcher still owns the namespace, and only then bubblewrap, which starts the
 * step as an unprivileged user of a user namespace of its own, with no capabilities, so the
 * step cannot change the rules. Each helper dies with its parent (setpriv --pdeathsig), so a
 * killed App leaves no network stack behind; the whole tree is one process group for exec.
 */
import type { NetEndpoints } from "./net-policy.js";
import { findProgramIn } from "./programs.js";

/** The programs a namespace needs, found on the App's PATH or in the system folders. */
export interface NetTools {
  kind: "pasta" | "slirp4netns";
  stack: string;
  unshare: string;
  ip: string;
  setpriv: string;
  mkfifo: string;
  /** Joins a spare namespace made ahead of the step (net-spares.ts). */
  nsenter: string;
  readlink: string;
}

/** Where the helpers are looked for besides PATH: `ip` lives in sbin, often off an ordinary user's PATH. */
const SYSTEM_BINS = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/**
 * The tools of this host: slirp4netns when it is installed, pasta otherwise (or the one
 * `prefer` names, when present); what is missing when no namespace can be made. slirp4netns
 * comes first for its launch cost: pasta (passt 2023-03) sets up its socket and pipe pools
 * before it reports ready, 130-330 ms on a loaded 2-core machine against 20-60 ms
 * (bench/sandbox.ts; its figure is under `.
 */
export function findNetTools(path: string, prefer?: NetTools["kind"]): NetTools | { missing: string[] } {
  const dirs = [...path.split(":"), ...SYSTEM_BINS];
  const pasta = findProgramIn("pasta", dirs);
  const slirp = findProgramIn("slirp4netns", dirs);
  const unshare = findProgramIn("unshare", dirs);
  const ip = findProgramIn("ip", dirs);
  const setpriv = findProgramIn("setpriv", dirs);
  const mkfifo = findProgramIn("mkfifo", SYSTEM_BINS);
  const nsenter = findProgramIn("nsenter", dirs);
  const readlink = findProgramIn("readlink", SYSTEM_BINS);
  const missing = [
    ...(pasta || slirp ? [] : ["pasta (apt-get install -y passt) or slirp4netns (apt-get install -y slirp4netns)"]),
    ...(ip ? [] : ["ip (apt-get install -y iproute2)"]),
    ...(unshare && setpriv && nsenter ? [] : ["unshare, setpriv and nsenter (apt-get install -y util-linux)"]),
    ...(mkfifo && readlink ? [] : ["mkfifo and readlink (apt-get install -y coreutils)"]),
  ];
  if (missing.length > 0 || !unshare || !ip || !setpriv || !mkfifo || !nsenter || !readlink) return { missing };
  const kind = (prefer === "pasta" && pasta) || !slirp ? "pasta" : "slirp4netns";
  const stack = kind === "pasta" ? pasta : slirp;
  return stack ? { kind, stack, unshare, ip, setpriv, mkfifo, nsenter, readlink } : { missing };
}

/** The resolver and host-loopback addresses a step sees with each stack. */
export function endpointsOf(kind: NetTools["kind"]): NetEndpoints {
  // pasta forwards DNS sent to an address we name (a link-local one no host uses) and maps host
  // ports onto the namespace's own loopback; slirp4netns has fixed addresses in 10.0.2.0/24.
  return kind === "pasta" ? { dns: "169.254.1.1", hostLoopback: "127.0.0.1" } : { dns: "10.0.2.3", hostLoopback: "10.0.2.2" };
}

/** Single-quotes a word for /bin/sh. */
function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The user-mode stack's command attached to the namespace of process `$ns`, reporting readiness on `$d/net-ready`. */
function stackCommand(tools: NetTools, hostPorts: readonly number[]): string {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  if (tools.kind === "pasta") {
    // -T/-U none: no port of the host's loopback appears inside (the default would map every bound one);
    // --no-map-gw: the gateway is not the host; -P: the pid file, written once the namespace is configured.
    const forwarded = hostPorts.length > 0 ? hostPorts.join(",") : "none";
    return [
      quote(tools.stack),
      "--config-net",
      "-f",
      "-q",
      "--runas",
      `${uid}:${gid}`,
      "-t",
      "none",
      "-u",
      "none",
      "-T",
      forwarded,
      "-U",
      "none",
      "--no-map-gw",
      "--dns-forward",
      endpointsOf("pasta").dns,
      "-P",
      '"$d/net-ready"',
      '"$ns"',
      '4>"$d/net-ready"',
      '>"$d/net.log"',
      "2>&1",
    ].join(" ");
  }
  // The host's loopback (10.0.2.2) only where a port of it is opened; the rules then limit it to those ports.
  return [
    quote(tools.stack),
    "--configure",
    "--mtu=65520",
    ...(hostPorts.length > 0 ? [] : ["--disable-host-loopback"]),
    "--enable-sandbox",
    "--enable-seccomp",
    "--ready-fd=4",
    '"$ns"',
    "tap0",
    '4>"$d/net-ready"',
    '>"$d/net.log"',
    "2>&1",
  ].join(" ");
}

/**
 * As root, the stack starts in a mount namespace of its own whose mounts propagate nowhere:
 * slirp4netns's own sandbox (`--enable-sandbox`) makes a mount namespace and detaches the old
 * root, and with the host's shared mount points copied as peers, those unmounts reached the
 * host (Podman's and `ip netns`'s namespace mounts vanished). A user other than root makes
 * its mount namespaces in a user namespace, where the kernel already stops such propagation.
 */
function privateMounts(tools: NetTools): string {
  return process.getuid?.() === 0 ? `${quote(tools.unshare)} --mount --propagation private -- ` : "";
}

/** The rules, applied by the namespace's first process once the stack has configured it. */
function rulesCommand(tools: NetTools): string {
  const ip = quote(tools.ip);
  // The rules come once the stack has configured the namespace: a gateway in a blocked range
  // (a cloud VM's 10.x one, slirp4netns's 10.0.2.2) could not be given its default route after them.
  return `${ip} -batch "$0/net4" >&2 && ${ip} -6 -batch "$0/net6" >&2 || exit 125`;
}

/**
 * The script that makes a namespace whose first process runs `inner` (with `$0` the folder),
 * connects the stack, lets `inner` go on, and exits with its status. `stdin`: the step's own
 * standard input is handed to `inner` (a background command of a shell without job control
 * would read /dev/null).
 */
function namespaceScript(tools: NetTools, hostPorts: readonly number[], inner: string, stdin: boolean): string {
  return [
    'd="$0"',
    ...(stdin ? ["exec 5<&0"] : []),
    // The launcher runs outside the sandbox with the step's environment: every program it starts
    // is named by an absolute path, never looked up on a PATH the step's configuration may set.
    `${quote(tools.mkfifo)} "$d/ns-ready" "$d/net-ready" "$d/go" "$d/hold" || exit 125`,
    `${quote(tools.setpriv)} --pdeathsig KILL -- ${quote(tools.unshare)} --user --map-root-user --net -- /bin/sh -c ${quote(inner)} "$d" "$@" 3>"$d/ns-ready" ${stdin ? "<&5 5<&-" : "</dev/null"} &`,
    "ns=$!",
    ...(stdin ? ["exec 5<&-"] : []),
    'read state < "$d/ns-ready"',
    'if [ "$state" != ok ]; then wait "$ns"; echo "harness: the step\'s network namespace could not be made" >&2; exit 125; fi',
    `${quote(tools.setpriv)} --pdeathsig KILL -- ${privateMounts(tools)}${stackCommand(tools, hostPorts)} &`,
    "net=$!",
    // The stack holds the fifo open from the start (fd 4) until it writes its pid (pasta) or "1"
    // (slirp4netns, no newline): an end of stream with nothing read means it failed.
    'ready=; read ready < "$d/net-ready" || [ -n "$ready" ] || ready=',
    'if [ -z "$ready" ]; then',
    '  kill -9 "$ns"; wait "$ns"',
    `  echo "harness: ${tools.kind} could not connect the step's network namespace:" >&2; while IFS= read -r line; do case "$line" in *"to syslog"*) ;; *) echo "$line" >&2 ;; esac; done < "$d/net.log"; exit 125`,
    "fi",
    'echo go > "$d/go"',
    'wait "$ns"; status=$?',
    'kill "$net" 2>/dev/null; wait "$net" 2>/dev/null',
    'exit "$status"',
  ].join("\n");
}

/**
 * The argv that runs `step` (bubblewrap's whole command line) in a network namespace of its
 * own. `dir` is the step's scratch folder, holding the rule files `net4` and `net6`. Exits 125
 * with a line on stderr when the namespace cannot be made; otherwise with the step's status.
 */
export function netLauncherArgv(tools: NetTools, dir: string, hostPorts: readonly number[], step: readonly string[]): string[] {
  const inner = ["echo ok >&3; exec 3>&-", 'read _ < "$0/go" || exit 125', rulesCommand(tools), 'exec "$@"'].join("\n");
  return [tools.setpriv, "--pdeathsig", "KILL", "--", "/bin/sh", "-c", namespaceScript(tools, hostPorts, inner, true), dir, ...step];
}

/**
 * The argv that makes a spare namespace in `dir` (with its rule files) ahead of a step: once
 * its rules are set, its first process writes its pid and its namespace's identity to
 * `dir/ready` and waits, holding the namespace, until the spare is dropped (its process group
 * ended). Nothing else ever opens `dir/hold` for writing.
 */
export function spareNamespaceArgv(tools: NetTools, dir: string, hostPorts: readonly number[]): string[] {
  const inner = [
    "echo ok >&3; exec 3>&-",
    'read _ < "$0/go" || exit 125',
    rulesCommand(tools),
    // The identity is read by the process itself, so it names this namespace and no other.
    `echo "$$ $(${quote(tools.readlink)} /proc/self/ns/net)" > "$0/ready"`,
    'read _ < "$0/hold"',
  ].join("\n");
  return [tools.setpriv, "--pdeathsig", "KILL", "--", "/bin/sh", "-c", namespaceScript(tools, hostPorts, inner, false), dir];
}

/** The argv that runs `step` in the namespace held by process `pid` (a spare), as its root user, like a fresh one's. */
export function joinNamespaceArgv(tools: NetTools, pid: number, step: readonly string[]): string[] {
  // --preserve-credentials: a user other than root made the namespace with setgroups denied, so
  // nsenter's own setgroups would fail; its uid already maps to root there, with every capability.
  return [tools.nsenter, `--target=${pid}`, "--user", "--net", "--preserve-credentials", "--", ...step];
}
