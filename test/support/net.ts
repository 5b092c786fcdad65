/** Loopback helpers for tests that start servers. */
import { createServer } from "node:net";

/** A free loopback port (the kernel's pick, released just before the caller binds it). */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

/**
 * The backlog a loopback port listens with, as the kernel reports it (`ss`: the Send-Q of a
 * listening socket is its accept queue's length); undefined when nothing listens there.
 */
export async function listenBacklogOf(port: number): Promise<number | undefined> {
  const { exec } = await import("../../src/exec/index.js");
  const result = await exec(["ss", "-ltnH", `sport = :${port}`], { cwd: process.cwd(), captureStdout: true, timeoutMs: 30_000 });
  const line = (result.stdout?.toString("utf8") ?? "").split("\n").find((row) => row.trim() !== "");
  const sendQ = line?.trim().split(/\s+/)[2];
  return sendQ === undefined ? undefined : Number(sendQ);
}
