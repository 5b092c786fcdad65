/** The connection cap of `harness serve`: chosen from RLIMIT_NOFILE, set by HARNESS_MAX_CONNECTIONS, enforced on a real server. */
import { writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import {
  capConnections,
  connectionCapFor,
  MAX_CHOSEN_CONNECTIONS,
  MIN_CHOSEN_CONNECTIONS,
  readNofileLimit,
  readServerDoor,
  serverDoorNotice,
  UNKNOWN_LIMIT_CONNECTIONS,
} from "../../src/cli/server-door.js";
import { eventually } from "../support/poll.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

describe("the connection cap's number", () => {
  it("reads the soft limit of open files from a limits file", () => {
    const dir = makeTempDir();
    const file = join(dir, "limits");
    writeFileSync(
      file,
      "Limit                     Soft Limit           Hard Limit           Units     \nMax open files            4096                 524288               files     \n",
    );
    expect(readNofileLimit(file)).toBe(4096);
    writeFileSync(file, "Max open files            unlimited            unlimited            files\n");
    expect(readNofileLimit(file)).toBeUndefined();
    expect(readNofileLimit(join(dir, "absent"))).toBeUndefined();
    expect(readNofileLimit()).toBeGreaterThan(0);
  });

  it("leaves half the limit (at least 512) to the stories and a fifth of the rest to refusals, within bounds", () => {
    expect(connectionCapFor(1024)).toBe(409);
    expect(connectionCapFor(4096)).toBe(1638);
    expect(connectionCapFor(20_000)).toBe(8000);
    expect(connectionCapFor(1_048_576)).toBe(MAX_CHOSEN_CONNECTIONS);
    expect(connectionCapFor(256)).toBe(MIN_CHOSEN_CONNECTIONS);
    expect(connectionCapFor(undefined)).toBe(UNKNOWN_LIMIT_CONNECTIONS);
  });

  it("takes HARNESS_MAX_CONNECTIONS over the limit, and refuses a value that is not a positive integer", () => {
    expect(readServerDoor({ HARNESS_MAX_CONNECTIONS: " 20 " }, { nofile: 4096 })).toEqual({
      maxConnections: 20,
      source: "HARNESS_MAX_CONNECTIONS",
      nofile: 4096,
    });
    expect(readServerDoor({}, { nofile: 4096 })).toEqual({ maxConnections: 1638, source: "RLIMIT_NOFILE", nofile: 4096 });
    expect(readServerDoor({}, { nofile: undefined })).toEqual({ maxConnections: UNKNOWN_LIMIT_CONNECTIONS, source: "default" });
    expect(() => readServerDoor({ HARNESS_MAX_CONNECTIONS: "0" }, { nofile: 4096 })).toThrow("HARNESS_MAX_CONNECTIONS must be a positive integer, got '0'");
    expect(serverDoorNotice(readServerDoor({}, { nofile: 4096 }))).toBe(
      "harness serve: at most 1638 connections at once (chosen from the descriptor limit 4096; HARNESS_MAX_CONNECTIONS sets it)\n",
    );
  });
});

describe("capConnections on a real server", () => {
  let server: Server;
  let port = 0;
  let refused = 0;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    server = createServer((_request, response) => response.end("ok"));
    capConnections(server, { maxConnections: 3, retryAfterSeconds: 7, onRefused: () => (refused += 1) });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const get = (): Promise<{ status: number; retryAfter: string | undefined; body: string }> =>
    new Promise((resolve, reject) => {
      request({ host: "127.0.0.1", port, path: "/", agent: false }, (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.once("end", () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers["retry-after"], body }));
      })
        .once("error", reject)
        .end();
    });

  it("refuses the connection past the cap with 503 and Retry-After, without parsing its request, and admits again once one closes", async () => {
    for (let i = 0; i < 3; i += 1) {
      sockets.push(
        await new Promise<Socket>((resolve) => {
          const socket = connect({ host: "127.0.0.1", port }, () => resolve(socket));
        }),
      );
    }
    expect(await get()).toEqual({ status: 503, retryAfter: "7", body: "too many connections: try again later\n" });
    expect(refused).toBe(1);
    sockets.shift()?.destroy();
    expect(
      await eventually(
        "an admitted request",
        async () => {
          const answer = await get();
          return answer.status === 200 ? answer.body : undefined;
        },
        30_000,
      ),
    ).toBe("ok");
  });
});
