import type { Redis } from "ioredis";

/*
 * Per-installation fairness: at most `limit` jobs of one installation run at once across every
 * worker. A slot is a member of a sorted set scored by when its hold expires (Redis's own clock,
 * so workers' clocks do not matter); the holder renews it with its heartbeat, and a slot of a
 * worker that died expires with its lease.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local expires = now + tonumber(ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], expires, ARGV[1])
  return 1
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], expires, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local done = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return done
`;

/** The slots of every installation, for one worker process. */
export class InstallationSlots {
  constructor(
    private readonly redis: Redis,
    private readonly key: (installationId: number) => string,
    /** `HARNESS_INSTALLATION_SLOTS`; undefined: no limit. */
    readonly limit: number | undefined,
    private readonly holdMs: number,
  ) {}

  /** Takes a slot of `installationId` for `jobId`; false when the installation's slots are all held. */
  async acquire(installationId: number, jobId: string): Promise<boolean> {
    if (this.limit === undefined) return true;
    const taken = await this.redis.eval(ACQUIRE, 1, this.key(installationId), jobId, String(this.holdMs), String(this.limit));
    return taken === 1;
  }

  /** Extends a held slot; part of the running job's heartbeat. Without a limit no slot was taken, and `XX` adds none. */
  async renew(installationId: number, jobId: string): Promise<void> {
    await this.redis.eval(RENEW, 1, this.key(installationId), jobId, String(this.holdMs));
  }

  /** Frees a slot (without a limit there is none, and removing nothing changes nothing). */
  async release(installationId: number, jobId: string): Promise<void> {
    await this.redis.zrem(this.key(installationId), jobId);
  }

  /** The job ids holding a slot of `installationId` now (for tests and `harness status`). */
  async holders(installationId: number): Promise<string[]> {
    const [seconds, micros] = await this.redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    return this.redis.zrangebyscore(this.key(installationId), now, "+inf");
  }
}
