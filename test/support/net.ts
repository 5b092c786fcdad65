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
