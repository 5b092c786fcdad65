/** HARNESS_LISTEN_BACKLOG: read, cut to the kernel's somaxconn, and given to a real listen. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { channel } from "node:diagnostics_channel";
import {
  backlogNotice,
  DEFAULT_LISTEN_BACKLOG,
  kernelSomaxconn,
  LISTEN_CHANNEL,
  listeningWithBacklog,
  readListenBacklog,
} from "../../src/cli/listen-backlog.js";
import { listenBacklogOf } from "../support/net.js";

function listening(server: Server, options: { port: number; host: string; backlog?: number }): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options, () => resolve((server.address() as AddressInfo).port));
  });
}

function closed(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe("readListenBacklog", () => {
  it("asks for 4096 when unset or blank", () => {
    expect(DEFAULT_LISTEN_BACKLOG).toBe(4096);
    expect(readListenBacklog({}, undefined)).toEqual({ backlog: 4096, requested: 4096 });
    expect(readListenBacklog({ HARNESS_LISTEN_BACKLOG: "  " }, 8192)).toEqual({ backlog: 4096, requested: 4096 });
  });

  it("takes the setting, trimmed, up to the kernel's somaxconn", () => {
    expect(readListenBacklog({ HARNESS_LISTEN_BACKLOG: " 64 " }, 4096)).toEqual({ backlog: 64, requested: 64 });
    expect(readListenBacklog({ HARNESS_LISTEN_BACKLOG: "4096" }, 4096)).toEqual({ backlog: 4096, requested: 4096 });
  });

  it("is cut to somaxconn when that is lower, and says so", () => {
    const setting = readListenBacklog({ HARNESS_LISTEN_BACKLOG: "10000" }, 4096);
    expect(setting).toEqual({ backlog: 4096, requested: 10000, cappedBy: 4096 });
    expect(backlogNotice(setting)).toBe("harness serve: listen backlog 4096, not 10000: the kernel's net.core.somaxconn is 4096\n");
    expect(readListenBacklog({}, 128)).toEqual({ backlog: 128, requested: 4096, cappedBy: 128 });
    expect(backlogNotice(readListenBacklog({}, 8192))).toBeUndefined();
  });

  it.each(["0", "-5", "many", "12.5"])("refuses %p, naming the variable", (value) => {
    expect(() => readListenBacklog({ HARNESS_LISTEN_BACKLOG: value }, 4096)).toThrow(`HARNESS_LISTEN_BACKLOG must be a positive integer, got '${value}'`);
  });
});

describe("kernelSomaxconn", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "somaxconn-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the number the file holds", () => {
    writeFileSync(join(dir, "n"), "4096\n");
    expect(kernelSomaxconn(join(dir, "n"))).toBe(4096);
  });

  it("is undefined for a missing file or a value that is not a positive integer", () => {
    expect(kernelSomaxconn(join(dir, "absent"))).toBeUndefined();
    for (const text of ["0\n", "lots\n", "-1\n", "1.5\n", ""]) {
      writeFileSync(join(dir, "bad"), text);
      expect(kernelSomaxconn(join(dir, "bad"))).toBeUndefined();
    }
  });

  it("reads this kernel's setting", () => {
    expect(kernelSomaxconn()).toBeGreaterThan(0);
  });
});

describe("listeningWithBacklog", () => {
  it("gives the backlog to a listen started inside, as the kernel then reports", async () => {
    const server = createServer();
    const { value: port, applied } = await listeningWithBacklog(7, () => listening(server, { port: 0, host: "127.0.0.1" }));
    try {
      expect(applied).toBe(1);
      expect(await listenBacklogOf(port)).toBe(7);
    } finally {
      await closed(server);
    }
  });

  it("leaves a listen that names its own backlog, and every listen after it returns", async () => {
    const own = createServer();
    const after = createServer();
    const { value: ownPort, applied } = await listeningWithBacklog(7, () => listening(own, { port: 0, host: "127.0.0.1", backlog: 9 }));
    const afterPort = await listening(after, { port: 0, host: "127.0.0.1" });
    try {
      expect(applied).toBe(0);
      expect(await listenBacklogOf(ownPort)).toBe(9);
      expect(await listenBacklogOf(afterPort)).toBe(511);
    } finally {
      await closed(own);
      await closed(after);
    }
  });

  it("leaves a message of another shape alone (a node whose channel says something else), and gives the backlog to the next listen", async () => {
    const server = createServer();
    const { value: port, applied } = await listeningWithBacklog(7, () => {
      for (const message of [undefined, null, {}, { options: null }, { options: 5 }, { options: "x" }]) channel(LISTEN_CHANNEL).publish(message);
      return listening(server, { port: 0, host: "127.0.0.1" });
    });
    try {
      expect(applied).toBe(1);
      expect(await listenBacklogOf(port)).toBe(7);
    } finally {
      await closed(server);
    }
  });

  it("stops listening for listens when start fails", async () => {
    await expect(listeningWithBacklog(7, () => Promise.reject(new Error("no start")))).rejects.toThrow("no start");
    const server = createServer();
    const port = await listening(server, { port: 0, host: "127.0.0.1" });
    try {
      expect(await listenBacklogOf(port)).toBe(511);
    } finally {
      await closed(server);
    }
  });
});
