/**
 * The filtering HTTP(S) proxy of one networked step, when the operator restricts steps to
 * named hosts (`HARNESS_EGRESS_ALLOW`). It listens on the host's loopback; the step reaches it
 * through a port its network stack forwards (its only way out besides DNS and destinations
 * opened by `HARNESS_NET_ALLOW`). HTTPS goes through `CONNECT host:port`, plain HTTP through
 * absolute-form requests. A refused host is reported to the caller (the step's log) with the
 * reason; an allowed name that resolves to the host's private side is refused too.
 */
import { lookup } from "node:dns/promises";
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import { egressAllows } from "./net-settings.js";
import { reachable, type OpenedDestination } from "./net-policy.js";

/** Resolves a host name to its addresses (the system resolver unless a test gives one). */
export type Resolve = (host: string) => Promise<string[]>;

/** The system resolver's addresses for a name. */
export const systemResolve: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** A running proxy: its loopback port, and a way to stop it (ending every tunnel). */
export interface EgressProxy {
  port: number;
  close(): Promise<void>;
}

export interface EgressProxyOptions {
  /** `HARNESS_EGRESS_ALLOW`: host names, `*.domain` for subdomains. */
  allow: readonly string[];
  /** Destinations opened by `HARNESS_NET_ALLOW` (the only private ones the proxy connects to). */
  opened: readonly OpenedDestination[];
  /** Told every refusal, as one line naming the host. */
  onRefused: (line: string) => void;
  resolve?: Resolve;
}

/** Most connections one step keeps open through the proxy; more wait in the kernel's backlog. */
const MAX_CONNECTIONS = 256;

/** Splits `host:port` (`[v6]:port` too); undefined when it is not one. */
function hostAndPort(target: string, defaultPort?: number): { host: string; port: number } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/]+)(?::(\d{1,5}))?$/.exec(target);
  const port = match?.[2] === undefined ? defaultPort : Number(match[2]);
  if (!match?.[1] || port === undefined || !(port >= 1 && port <= 65535)) return undefined;
  return { host: match[1].replace(/^\[(.*)\]$/, "$1"), port };
}

/** Starts the proxy on 127.0.0.1 (an ephemeral port). */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const resolve = options.resolve ?? systemResolve;
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };

  /** The address to connect to for a permitted target, or why it is refused. */
  const admit = async (method: string, host: string, port: number): Promise<{ address: string } | { refused: string }> => {
    const name = host.toLowerCase();
    if (!egressAllows(options.allow, name)) return { refused: `refused ${method} ${name}:${port} (not in HARNESS_EGRESS_ALLOW)` };
    let addresses: string[];
    try {
      addresses = isIP(name) !== 0 ? [name] : await resolve(name);
    } catch (error) {
      return { refused: `refused ${method} ${name}:${port} (cannot resolve it: ${(error as NodeJS.ErrnoException).code ?? String(error)})` };
    }
    const address = addresses.find((candidate) => reachable(candidate, port, options.opened));
    return address === undefined
      ? { refused: `refused ${method} ${name}:${port} (it resolves to the host's loopback, link-local or private side, which HARNESS_NET_ALLOW does not open)` }
      : { address };
  };
  const refuse = (line: string): void => options.onRefused(`harness egress proxy: ${line}`);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      let url: URL | undefined;
      try {
        url = new URL(req.url ?? "");
      } catch {
        url = undefined;
      }
      const target = url?.protocol === "http:" ? hostAndPort(url.host, 80) : undefined;
      if (!url || !target) {
        res.writeHead(400, { "content-type": "text/plain" }).end("harness egress proxy: only absolute http:// requests and CONNECT are proxied\n");
        return;
      }
      const verdict = await admit(req.method ?? "GET", target.host, target.port);
      if ("refused" in verdict) {
        refuse(verdict.refused);
        res.writeHead(403, { "content-type": "text/plain" }).end(`harness egress proxy: ${verdict.refused}\n`);
        return;
      }
      const headers = { ...req.headers };
      delete headers["proxy-connection"];
      delete headers["proxy-authorization"];
      const upstream = request(
        { host: verdict.address, port: target.port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      req.pipe(upstream);
    })();
  });
  server.maxConnections = MAX_CONNECTIONS;
  server.on("connection", track);
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    void (async () => {
      const target = hostAndPort(req.url ?? "");
      if (!target) {
        client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
        return;
      }
      const verdict = await admit("CONNECT", target.host, target.port);
      if ("refused" in verdict) {
        refuse(verdict.refused);
        client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nharness egress proxy: ${verdict.refused}\n`);
        return;
      }
      const upstream = connect({ host: verdict.address, port: target.port });
      track(upstream);
      upstream.on("connect", () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
      client.on("close", () => upstream.destroy());
    })();
  });

  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => done());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}
