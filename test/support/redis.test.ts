/**
 * The test Redis helper's own promises: the file's client, dropped in any state, is made again
 * at its next use and answers. A client dropped while waiting to reconnect was the hang of
 * bullmq-enqueue's tests after its connection test: QUIT there leaves ioredis's client
 * "reconnecting" for good, holding every later command, and the helper handed it on.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { exec } from "../../src/exec/index.js";
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

  it("ends the server with the process that started it, even one killed with SIGKILL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "harness-redis-child-"));
    const logPath = join(dir, "child.log");
    let childPid = 0;
    const done = exec([process.execPath, "--import", "tsx", resolve("test/support/redis-child.ts")], {
      cwd: process.cwd(),
      logPath,
      timeoutMs: 5 * GUARD_MS,
      onSpawn: (pid) => {
        childPid = pid;
      },
    });
    try {
      const started = await eventually(
        "the child's redis-server",
        () => {
          const line = readFileSync(logPath, "utf8")
            .split("\n")
            .find((entry) => entry.startsWith("{"));
          return line ? (JSON.parse(line) as { pid: number; url: string }) : undefined;
        },
        5 * GUARD_MS,
      );
      expect(alive(started.pid)).toBe(true);
      process.kill(childPid, "SIGKILL");
      expect((await done).signal).toBe("SIGKILL");
      await eventually("the server to end with its parent", () => (alive(started.pid) ? undefined : true), GUARD_MS);
    } finally {
      if (childPid !== 0 && alive(childPid)) process.kill(childPid, "SIGKILL");
      await done;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** True while the process runs (a zombie counts as ended: its parent is gone and init reaps it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).charAt(0) !== "Z";
  } catch {
    return false;
  }
}
