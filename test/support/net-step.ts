/** Networked sandbox steps for tests: this host's tools, a loopback listener, a connect probe run inside. */
import { createServer, type Server } from "node:net";
import { findNetTools, Sandbox, sandboxSettingsFromEnv, type NetTools, type SandboxSettings } from "../../src/sandbox/index.js";
import { makeTempDir } from "./tmp.js";

/** The tools of this host for `kind`; fails the test saying how to install what is missing. */
export function toolsFor(kind: NetTools["kind"]): NetTools {
  const tools = findNetTools(process.env.PATH ?? "", kind);
  if ("missing" in tools) throw new Error(`the network tests need ${tools.missing.join(", ")}`);
  if (tools.kind !== kind) throw new Error(`the network tests need ${kind} (apt-get install -y ${kind === "pasta" ? "passt" : "slirp4netns"})`);
  return tools;
}

export const box = (env: NodeJS.ProcessEnv, kind: NetTools["kind"] = "pasta", overrides: Partial<SandboxSettings> = {}): Sandbox =>
  new Sandbox({ ...sandboxSettingsFromEnv(env), ...overrides }, { netTools: toolsFor(kind) });

/** A loopback listener of the host (the App's port, Redis): counts connections, greets each. */
export async function hostListener(): Promise<{ port: number; connections: () => number; server: Server }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.on("error", () => undefined);
    socket.end("hello from the host\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as { port: number }).port, connections: () => connections, server };
}

/** A step script line: connect to host:port from inside and print `<label> reached` or `<label> <error code>`. */
export const connectLine = (label: string, host: string, port: number): string =>
  `node -e 'require("net").connect(${port}, "${host}").on("connect", () => { console.log("${label} reached"); process.exit(0) }).on("error", (e) => { console.log("${label} " + e.code); process.exit(0) })'`;

export async function networkedStep(
  sandbox: Sandbox,
  script: string,
  logPath?: string,
): Promise<{ out: string; code: number | null; net: string; tail: string }> {
  const dir = makeTempDir();
  const result = await sandbox.shell(
    script,
    { cwd: dir, captureStdout: true, timeoutMs: 60_000, ...(logPath ? { logPath } : {}) },
    { purpose: "agent", network: true, writable: [dir] },
  );
  return { out: result.stdout?.toString() ?? "", code: result.exitCode, net: result.net, tail: result.tail };
}
