/**
 * The test Redis helper's own promises: the file's client, dropped in any state, is made again
 * at its next use and answers. A client dropped while waiting to reconnect was the hang of
 * bullmq-enqueue's tests after its connection test: QUIT there leaves ioredis's client
 * "reconnecting" for good, holding every later command, and the helper handed it on.
 */
import { Redis } from "ioredis";
import { GUARD_MS, within } from "../queue/helpers.js";
import { eventually } from "./poll.js";
import { redisForFile } from "./redis.js";

const server = redisForFile();

describe("redisForFile", () => {
  it("makes the file's client again after dropClient, even one dropped while waiting to reconnect", async () => {
    const first = server.client;
    expect(await within("PING on the first client", first.ping())).toBe("PONG");
    const watcher = new Redis(server.url);
    try {
      // Redis drops the file's client and refuses it again: it waits to reconnect, then tries, in turns.
      await watcher.config("SET", "maxclients", "1");
      await watcher.call("CLIENT", "KILL", "TYPE", "normal");
      await eventually("the file's client waiting to reconnect", () => (first.status === "reconnecting" ? true : undefined), GUARD_MS);
      server.dropClient();
    } finally {
      await watcher.config("SET", "maxclients", "10000");
      watcher.disconnect();
    }
    const again = server.client;
    expect(again).not.toBe(first);
    expect(await within("PING on the client made again", again.ping())).toBe("PONG");
    // Made once per drop: the next use is the same client.
    expect(server.client).toBe(again);
  });

  it("makes the client again after dropping a ready one, and after a drop with no client made", async () => {
    server.dropClient();
    const first = server.client;
    expect(await within("PING on the first client", first.ping())).toBe("PONG");
    server.dropClient();
    await eventually("the dropped client ended", () => (first.status === "end" ? true : undefined), GUARD_MS);
    expect(await within("PING after the drop", server.client.ping())).toBe("PONG");
    expect(server.client).not.toBe(first);
  });
});
