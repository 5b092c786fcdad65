/** A process that starts a redis-server with the test helper, prints its pid and port, and waits to be killed. */
import { startRedis } from "./redis.js";

const server = await startRedis();
process.stdout.write(`${JSON.stringify({ pid: server.pid, url: server.url })}\n`);
setInterval(() => undefined, 1 << 30);
