/**
 * An open-loop HTTP load generator in a process of its own: `count` prepared POSTs sent on a
 * fixed schedule (a slow answer does not slow the sender), each answer timed. It runs apart
 * from the bench's other work (the fake GitHub, signing, bookkeeping) so that the generator's
 * own CPU does not show up as the server's latency, and it uses node:http with a keep-alive
 * pool instead of fetch, whose per-request cost was most of a core at 800/s.
 *
 *   node --import tsx bench/lib/open-loop.ts <requests.jsonl> <rate> <result.json>
 *
 * Each line of the input is `{ "url", "headers", "body" }`; the result is
 * `{ "ms": number[], "status": number[] }`, one entry each per request in order: `ms` is -1 for
 * a failure, a non-200 answer or no answer within `OPEN_LOOP_TIMEOUT_MS` (GitHub's own timeout
 * for a delivery); `status` is the answer's status code, 0 for none in time.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { pathToFileURL } from "node:url";

export const OPEN_LOOP_TIMEOUT_MS = 10_000;

export interface PreparedRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends `requests` at `rate` per second; resolves with each one's answer time in ms (-1: failed) and status (0: none). */
export async function openLoop(requests: readonly PreparedRequest[], rate: number): Promise<{ ms: number[]; status: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
  const bodies = requests.map((item) => Buffer.from(item.body));
  const results = new Array<number>(requests.length).fill(-1);
  const statuses = new Array<number>(requests.length).fill(0);
  const interval = 1000 / rate;
  let answered = 0;
  return new Promise<{ ms: number[]; status: number[] }>((done) => {
    const finish = (index: number, ms: number): void => {
      results[index] = ms;
      answered += 1;
      if (answered === requests.length) {
        agent.destroy();
        done({ ms: results, status: statuses });
      }
    };
    const send = (index: number): void => {
      const item = requests[index] as PreparedRequest;
      const body = bodies[index] as Buffer;
      const started = performance.now();
      let settled = false;
      const settle = (ms: number, status = 0): void => {
        if (settled) return;
        statuses[index] = status;
        settled = true;
        finish(index, ms);
      };
      const req = request(item.url, { method: "POST", agent, headers: { ...item.headers, "content-length": String(body.length) } }, (res) => {
        res.resume();
        res.on("end", () => settle(res.statusCode === 200 ? performance.now() - started : -1, res.statusCode ?? 0));
        res.on("error", () => settle(-1));
      });
      req.setTimeout(OPEN_LOOP_TIMEOUT_MS, () => {
        req.destroy();
        settle(-1);
      });
      req.on("error", () => settle(-1));
      req.end(body);
    };
    const start = performance.now();
    let next = 0;
    // Every tick sends what is due by now: a late timer sends the backlog at once, as an open loop must.
    const tick = (): void => {
      const due = Math.min(requests.length, Math.floor((performance.now() - start) / interval) + 1);
      while (next < due) send(next++);
      if (next < requests.length) setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
    };
    if (requests.length === 0) done({ ms: results, status: statuses });
    else tick();
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [input, rate, output] = process.argv.slice(2);
  if (!input || !rate || !output || !(Number(rate) > 0)) throw new Error("usage: open-loop.ts <requests.jsonl> <rate> <result.json>");
  const requests = readFileSync(input, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as PreparedRequest);
  writeFileSync(output, JSON.stringify(await openLoop(requests, Number(rate))));
}
