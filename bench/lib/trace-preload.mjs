/**
 * A benchmark-only tracer, preloaded into a `harness worker` by `bench/scale-out.ts --breakdown`
 * (`node --import <this file> bin/harness.js worker`), never by the product. It records, with
 * start and end times, what the process waits on: every child process (program and subcommand),
 * every HTTP request made with fetch (method and path, through undici's diagnostics channels),
 * every Redis command (BullMQ's Lua scripts by name), and its own CPU time every 100 ms. The
 * records go to `HARNESS_TRACE_FILE` as JSON lines, written in batches off the hot path; the
 * bench reads them back (bench/lib/gap-trace.ts) to say where the time between a worker's
 * stories goes.
 *
 * Plain JavaScript, so that the worker runs the compiled product with no TypeScript loader.
 */
import { appendFileSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { subscribe } from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import { Redis } from "ioredis";

const file = process.env.HARNESS_TRACE_FILE;
if (file) install(file);

function install(path) {
  const now = () => performance.timeOrigin + performance.now();
  const pending = [];
  const record = (kind, what, start, end, extra) => {
    pending.push(JSON.stringify({ k: kind, w: what, s: Math.round(start * 10) / 10, e: Math.round(end * 10) / 10, ...extra }));
  };
  const flush = () => {
    if (pending.length === 0) return;
    try {
      appendFileSync(path, `${pending.splice(0).join("\n")}\n`);
    } catch {
      // A trace that cannot be written is only a missing figure.
    }
  };
  setInterval(flush, 1000).unref();
  process.on("exit", flush);

  // Child processes: src/exec is the one place that spawns, through node:child_process's spawn.
  const require = createRequire(import.meta.url);
  // The tracer observes src/exec's children; it starts none itself.
  const childProcess = require("node:child_process");
  const spawn = childProcess.spawn;
  childProcess.spawn = function tracedSpawn(command, args, options) {
    const start = now();
    const child = spawn.call(this, command, args, options);
    const list = Array.isArray(args) ? args : [];
    const words = list.filter((word) => typeof word === "string" && !word.startsWith("-") && !word.includes("=")).slice(0, 2);
    const program = String(command).split("/").pop();
    const what = program === "git" ? `git ${words[0] ?? ""}` : `${program} ${words[0] ?? ""}`.trim();
    child.once("exit", () => record("proc", what, start, now()));
    return child;
  };
  syncBuiltinESMExports();

  // fetch (octokit): undici's diagnostics channels.
  const requests = new WeakMap();
  subscribe("undici:request:create", ({ request }) => {
    const path = String(request.path ?? "").split("?")[0];
    requests.set(request, { start: now(), what: `${request.method} ${path}` });
  });
  const done = ({ request }) => {
    const open = requests.get(request);
    if (!open) return;
    requests.delete(request);
    record("http", open.what, open.start, now());
  };
  subscribe("undici:request:trailers", done);
  subscribe("undici:request:error", done);

  // Redis: every command, scripts by the name they were defined under.
  const scripts = new Map();
  const defineCommand = Redis.prototype.defineCommand;
  Redis.prototype.defineCommand = function tracedDefine(name, definition) {
    const result = defineCommand.call(this, name, definition);
    const sha = this.scriptsSet?.[name]?.sha;
    if (sha) scripts.set(sha, name);
    return result;
  };
  const sendCommand = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function tracedSend(command, stream) {
    const start = now();
    const name =
      command?.name === "evalsha" || command?.name === "eval"
        ? `script ${(scripts.get(String(command.args?.[0])) ?? "?").split(":")[0]}`
        : String(command?.name);
    const result = sendCommand.call(this, command, stream);
    const settle = () => record("redis", name, start, now());
    command?.promise?.then(settle, settle);
    return result;
  };

  // Own CPU (user + system) per 100 ms.
  let last = process.cpuUsage();
  let lastAt = now();
  setInterval(() => {
    const usage = process.cpuUsage();
    const at = now();
    record("cpu", "self", lastAt, at, { cpu: Math.round((usage.user - last.user + usage.system - last.system) / 100) / 10 });
    last = usage;
    lastAt = at;
  }, 100).unref();
}
