/**
 * A real redis-server for the tests of the BullMQ adapter: started from the test itself on a
 * free loopback port, in a temporary folder, with persistence off, and ended with its group.
 * A machine without redis-server fails the test with the command that installs it.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { Redis } from "ioredis";
import { exec, type ExecResult } from "../../src/exec/index.js";
import { freePort } from "./net.js";
import { until } from "./poll.js";

export interface RedisServer {
  url: string;
  port: number;
  pid: number;
  /** Ends the server and removes its folder. */
  stop(): Promise<void>;
}

/** The redis-server program on PATH; throws saying how to install it when there is none. */
export function redisServerPath(env: NodeJS.ProcessEnv = process.env): string {
  const dirs = (env.PATH ?? "/usr/local/bin:/usr/bin:/usr/sbin").split(delimiter).filter((dir) => dir !== "");
  for (const dir of dirs) {
    const candidate = join(dir, "redis-server");
    if (existsSync(candidate)) return candidate;
  }
  throw new Error("redis-server is not installed; the BullMQ queue tests need it: apt-get install -y redis-server");
}

async function answersPing(url: string): Promise<boolean> {
  // A probe refused before the server listens keeps a closed socket: ending it would hold a timer of
  // `disconnectTimeout` (2 s by default) that keeps a short test file's process from exiting.
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, disconnectTimeout: 0 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** setpriv (util-linux) on PATH; throws saying how to install it when there is none. */
function setprivPath(env: NodeJS.ProcessEnv = process.env): string {
  const dirs = (env.PATH ?? "/usr/local/bin:/usr/bin:/usr/sbin").split(delimiter).filter((dir) => dir !== "");
  for (const dir of dirs) if (existsSync(join(dir, "setpriv"))) return join(dir, "setpriv");
  throw new Error("setpriv is not installed; the Redis tests end their server with the test process through it: apt-get install -y util-linux");
}

/**
 * Starts redis-server; resolves once it answers PING (a port taken meanwhile is retried on another).
 * The server dies with the process that started it (setpriv --pdeathsig), so a test run that is
 * killed (SIGKILL, a Jest worker ended) leaves no server behind.
 */
export async function startRedis(): Promise<RedisServer> {
  const program = redisServerPath();
  const setpriv = setprivPath();
  for (let attempt = 0; ; attempt += 1) {
    const dir = mkdtempSync(join(tmpdir(), "harness-redis-"));
    const port = await freePort();
    const abort = new AbortController();
    let pid = 0;
    let ended: ExecResult | undefined;
    const done = exec(
      [
        setpriv,
        "--pdeathsig",
        "KILL",
        "--",
        program,
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
        "--loglevel",
        "warning",
      ],
      {
        cwd: dir,
        logPath: join(dir, "redis.log"),
        signal: abort.signal,
        killGraceMs: 2000,
        onSpawn: (childPid) => {
          pid = childPid;
        },
      },
    );
    void done.then((result) => {
      ended = result;
    });
    const url = `redis://127.0.0.1:${port}/0`;
    // Ends early when the server exited (a port taken meanwhile); the check below says which, and the loop tries another port.
    await until("redis-server to answer PING", async () => ended !== undefined || (await answersPing(url)), 20_000).catch(() => undefined);
    const stop = async (): Promise<void> => {
      abort.abort();
      await done;
      rmSync(dir, { recursive: true, force: true });
    };
    if (!ended && (await answersPing(url))) return { url, port, pid, stop };
    const why = ended ? `exited ${ended.exitCode ?? ended.signal}: ${ended.tail}` : "did not answer within 20 s";
    await stop();
    if (attempt >= 2) throw new Error(`redis-server ${why}`);
  }
}

/** The redis-server a test file shares, and a plain client on it. */
export interface FileRedis {
  /** The server: started before the file's first test. */
  readonly server: RedisServer;
  /** Its URL. */
  readonly url: string;
  /**
   * A client on it, made at the first use (made again after {@link FileRedis.dropClient}) and ended
   * after the file. It notes connection errors without printing them (a test that drops every client).
   */
  readonly client: Redis;
  /**
   * Ends the client at once, whatever its state, and forgets it: the next use makes a new one. Not
   * `quit`: on a client waiting to reconnect (Redis dropped it), ioredis answers QUIT with OK and
   * cancels the reconnection, but the client never reaches "end"; it stays "reconnecting" and holds
   * every later command forever, which a client remade only once "end" then handed to the next test.
   */
  dropClient(): void;
  /** Redis's clock in ms, as the adapter reads it. */
  now(): Promise<number>;
}

/**
 * One redis-server for every test of a file, started in `beforeAll` and ended, with the client,
 * in `afterAll` (Jest's globals: the benchmarks import this file outside Jest). A test that stops
 * or freezes Redis starts its own with {@link startRedis}.
 */
export function redisForFile(): FileRedis {
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    client?.disconnect();
    client = undefined;
    await server?.stop();
    server = undefined;
  });
  const started = (): RedisServer => {
    if (!server) throw new Error("redisForFile: the file's redis-server is not running (used outside its tests?)");
    return server;
  };
  return {
    get server() {
      return started();
    },
    get url() {
      return started().url;
    },
    get client() {
      if (!client) {
        // Dropped, it ends at once: a socket Redis closed already would otherwise hold ioredis's 2 s disconnect timer.
        client = new Redis(started().url, { disconnectTimeout: 0 });
        client.on("error", () => undefined);
      }
      return client;
    },
    dropClient() {
      client?.disconnect();
      client = undefined;
    },
    async now() {
      const [seconds, micros] = await this.client.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    },
  };
}
