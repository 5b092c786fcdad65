import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dropSpares, netSettingsFromEnv, probeSandbox, Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { box, connectLine, hostListener, networkedStep, toolsFor } from "../support/net-step.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);
// Every step here makes its own namespace (the launcher's path); spares are tested in net-spares.test.ts.
beforeEach(dropSpares);
afterAll(dropSpares);

describe("network settings", () => {
  it("parses CIDRs, addresses and host:port, and names the variable of a bad value", () => {
    expect(netSettingsFromEnv({ HARNESS_NET_ALLOW: "10.1.0.0/16, fd00:1::/64,192.168.5.7,registry.internal:5000,[::1]:8080,127.0.0.1:4873" }).allow).toEqual([
      { kind: "cidr", family: 4, address: "10.1.0.0", prefix: 16 },
      { kind: "cidr", family: 6, address: "fd00:1::", prefix: 64 },
      { kind: "cidr", family: 4, address: "192.168.5.7", prefix: 32 },
      { kind: "port", host: "registry.internal", port: 5000 },
      { kind: "port", host: "::1", port: 8080 },
      { kind: "port", host: "127.0.0.1", port: 4873 },
    ]);
    expect(() => netSettingsFromEnv({ HARNESS_NET_ALLOW: "10.0.0.0/33" })).toThrow(/HARNESS_NET_ALLOW="10.0.0.0\/33".*prefix length must be 0-32/);
    expect(() => netSettingsFromEnv({ HARNESS_NET_ALLOW: "300.1.2.3/8" })).toThrow(/HARNESS_NET_ALLOW=.*not an IP address/);
    expect(() => netSettingsFromEnv({ HARNESS_NET_ALLOW: "registry:70000" })).toThrow(/HARNESS_NET_ALLOW="registry:70000".*port must be 1-65535/);
    expect(() => netSettingsFromEnv({ HARNESS_NET_ALLOW: "127.0.0.0/8" })).toThrow(/HARNESS_NET_ALLOW=.*loopback opens only with a port/);
    expect(() => netSettingsFromEnv({ HARNESS_EGRESS_ALLOW: "registry.example.com, bad host" })).toThrow(/HARNESS_EGRESS_ALLOW=.*bad host is not a host name/);
    expect(() => sandboxSettingsFromEnv({ HARNESS_SANDBOX_NET: "shared" })).toThrow(
      /HARNESS_SANDBOX_NET="shared" must be 'namespace' \(the default\) or 'host'/,
    );
    expect(netSettingsFromEnv({})).toEqual({ mode: "namespace", allow: [], egressAllow: [] });
    expect(netSettingsFromEnv({ HARNESS_SANDBOX_NET: "host", HARNESS_EGRESS_ALLOW: "*.Example.org" })).toMatchObject({
      mode: "host",
      egressAllow: ["*.example.org"],
    });
  });
});

describe.each(["pasta", "slirp4netns"] as const)("a networked step with %s", (kind) => {
  it("cannot reach the host's loopback, link-local or private addresses, and cannot lift the rules", async () => {
    const host = await hostListener();
    try {
      const { out, net } = await networkedStep(
        box({}, kind),
        [
          connectLine("host-loopback", "127.0.0.1", host.port),
          connectLine("metadata", "169.254.169.254", 80),
          connectLine("private10", "10.1.2.3", 80),
          connectLine("private172", "172.16.0.1", 80),
          connectLine("private192", "192.168.1.1", 80),
          connectLine("ula", "fd00::1", 80),
          // The step is uid 1000 without capabilities in a user namespace of its own: the rules are not its to change.
          "ip rule del pref 200 2>/dev/null && echo lifted || echo kept",
          "ip route add unreachable 10.99.0.0/16 2>/dev/null && echo routed || echo not-routed",
          connectLine("metadata-again", "169.254.169.254", 80),
          // With no internet here, that public destinations are routed out is shown by the kernel's route choice.
          "ip route get 203.0.113.7 >/dev/null 2>&1 && echo public-routed || echo public-blocked",
          "ip route get 10.1.2.3 >/dev/null 2>&1 && echo private-routed || echo private-blocked",
          "cat /etc/resolv.conf",
        ].join("; "),
      );
      expect(net).toBe("own");
      // The namespace's loopback is its own: nothing listens there, and nothing reached the host's listener.
      expect(out).toMatch(/^host-loopback ECONNREFUSED$/m);
      expect(host.connections()).toBe(0);
      // Refused at once by a prohibit rule (EACCES from connect), not left to time out.
      for (const label of ["metadata", "private10", "private172", "private192", "ula", "metadata-again"])
        expect(out).toMatch(new RegExp(`^${label} EACCES$`, "m"));
      expect(out).toMatch(/^kept$/m);
      expect(out).toMatch(/^not-routed$/m);
      expect(out).toMatch(/^public-routed$/m);
      expect(out).toMatch(/^private-blocked$/m);
      expect(out).toMatch(new RegExp(`^nameserver ${kind === "pasta" ? "169\\.254\\.1\\.1" : "10\\.0\\.2\\.3"}$`, "m"));
    } finally {
      host.server.close();
    }
  });

  it("hands the step its standard input (an agent's prompt arrives on stdin)", async () => {
    const dir = makeTempDir();
    const result = await box({}, kind).run(
      ["/bin/sh", "-c", "cat"],
      { cwd: dir, captureStdout: true, timeoutMs: 60_000, input: "the prompt\n" },
      { purpose: "agent", network: true, writable: [dir] },
    );
    expect(result.net).toBe("own");
    expect(result.stdout?.toString()).toBe("the prompt\n");
  });

  it("reaches what HARNESS_NET_ALLOW opens, and only that", async () => {
    const host = await hostListener();
    const other = await hostListener();
    try {
      const sandbox = box({ HARNESS_NET_ALLOW: `127.0.0.1:${host.port},10.1.0.0/16` }, kind);
      const loopback = kind === "pasta" ? "127.0.0.1" : "10.0.2.2";
      const { out } = await networkedStep(
        sandbox,
        [
          connectLine("allowed", loopback, host.port),
          connectLine("other-port", loopback, other.port),
          "ip route get 10.1.2.3 >/dev/null 2>&1 && echo opened-range-routed || echo opened-range-blocked",
          connectLine("outside-range", "10.2.0.1", 80),
        ].join("; "),
      );
      expect(out).toMatch(/^allowed reached$/m);
      expect(host.connections()).toBe(1);
      expect(out).toMatch(kind === "pasta" ? /^other-port ECONNREFUSED$/m : /^other-port EACCES$/m);
      expect(other.connections()).toBe(0);
      expect(out).toMatch(/^opened-range-routed$/m);
      expect(out).toMatch(/^outside-range EACCES$/m);
    } finally {
      host.server.close();
      other.server.close();
    }
  });
});

describe("the egress proxy", () => {
  it("lets a named host through, refuses another with the host in the step's log, and leaves no other way out", async () => {
    const host = await hostListener();
    const logPath = join(makeTempDir(), "step.log");
    // The test's named host is `localhost`; HARNESS_NET_ALLOW opens its port (the proxy connects to nothing private otherwise).
    const sandbox = box({ HARNESS_EGRESS_ALLOW: "localhost", HARNESS_NET_ALLOW: `127.0.0.1:${host.port}` });
    const tunnel = (target: string): string =>
      `node -e 'const u = new URL(process.env.HTTPS_PROXY); const s = require("net").connect(u.port, u.hostname, () => s.write("CONNECT ${target} HTTP/1.1\\r\\nHost: ${target}\\r\\n\\r\\n")); let t = ""; s.on("data", (d) => { t += d; if (t.includes("hello")) { console.log("${target} " + t.split("\\r\\n")[0] + " " + t.trim().split("\\n").pop()); process.exit(0) } }).on("end", () => { console.log("${target} " + t.split("\\r\\n")[0]); process.exit(0) })'`;
    try {
      const { out, net, tail } = await networkedStep(
        sandbox,
        ['echo "proxy=$HTTPS_PROXY"', tunnel(`localhost:${host.port}`), tunnel("elsewhere.example:443"), connectLine("direct-public", "203.0.113.7", 443)].join(
          "; ",
        ),
        logPath,
      );
      expect(net).toBe("egress");
      expect(out).toMatch(/^proxy=http:\/\/127\.0\.0\.1:\d+$/m);
      expect(out).toMatch(new RegExp(`^localhost:${host.port} HTTP/1.1 200 Connection Established hello from the host$`, "m"));
      expect(host.connections()).toBe(1);
      expect(out).toMatch(/^elsewhere\.example:443 HTTP\/1\.1 403 Forbidden$/m);
      expect(out).toMatch(/^direct-public EACCES$/m);
      const log = readFileSync(logPath, "utf8");
      expect(log).toMatch(/harness egress proxy: refused CONNECT elsewhere\.example:443 \(not in HARNESS_EGRESS_ALLOW\)/);
      expect(tail).toMatch(/refused CONNECT elsewhere\.example:443/);
    } finally {
      host.server.close();
    }
  });
});

describe("HARNESS_SANDBOX_NET", () => {
  it("=host lets networked steps share the host's network, and the result says so", async () => {
    const host = await hostListener();
    try {
      const { out, net } = await networkedStep(box({ HARNESS_SANDBOX_NET: "host" }), connectLine("host-loopback", "127.0.0.1", host.port));
      expect(out).toBe("host-loopback reached\n");
      expect(net).toBe("host");
      await expect(probeSandbox(box({ HARNESS_SANDBOX_NET: "host" }))).resolves.toEqual({ state: "on", hostNetwork: true });
    } finally {
      host.server.close();
    }
  });

  it("refuses stories where no network namespace can be made, naming the fix and the opt-out", async () => {
    const missing = await probeSandbox(
      new Sandbox(sandboxSettingsFromEnv({}), { netTools: { missing: ["pasta (apt-get install -y passt) or slirp4netns (apt-get install -y slirp4netns)"] } }),
    );
    expect(missing.state === "unavailable" && missing.reason).toMatch(
      /network namespace of their own: pasta \(apt-get install -y passt\).*HARNESS_SANDBOX_NET=host/,
    );

    const dir = makeTempDir();
    writeFileSync(join(dir, "pasta"), "#!/bin/sh\necho 'Failed to open tun socket in namespace' >&2\nexit 1\n", { mode: 0o755 });
    const broken = await probeSandbox(new Sandbox(sandboxSettingsFromEnv({}), { netTools: { ...toolsFor("pasta"), stack: join(dir, "pasta") } }));
    expect(broken.state === "unavailable" && broken.reason).toMatch(/pasta could not connect.*tun socket.*HARNESS_SANDBOX_NET=host/);
    await expect(probeSandbox(box({}))).resolves.toEqual({ state: "on" });
  });
});
