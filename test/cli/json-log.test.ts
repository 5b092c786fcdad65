import { pino } from "pino";
import { asyncJsonLog } from "../../src/cli/json-log.js";

describe("asyncJsonLog", () => {
  it("keeps Probot's own logger unless the format is JSON, or a setting only Probot's logger knows is used", () => {
    expect(asyncJsonLog({})).toBeUndefined();
    expect(asyncJsonLog({ LOG_FORMAT: "pretty" })).toBeUndefined();
    expect(asyncJsonLog({ LOG_FORMAT: "json", SENTRY_DSN: "https://key@sentry.example/1" })).toBeUndefined();
    expect(asyncJsonLog({ LOG_FORMAT: "json", LOG_LEVEL_IN_STRING: "true" })).toBeUndefined();
    expect(asyncJsonLog({ LOG_FORMAT: "json", LOG_MESSAGE_KEY: "message" })).toBeUndefined();
  });

  it("logs JSON at LOG_LEVEL (info when unset or unknown) through an asynchronous destination", () => {
    const log = asyncJsonLog({ LOG_FORMAT: "json", LOG_LEVEL: "warn" });
    expect(log?.level).toBe("warn");
    expect(asyncJsonLog({ LOG_FORMAT: "json" })?.level).toBe("info");
    expect(asyncJsonLog({ LOG_FORMAT: "json", LOG_LEVEL: "loud" } as unknown as NodeJS.ProcessEnv)?.level).toBe("info");
    // The destination is sonic-boom on stdout in its asynchronous mode: no write blocks the event loop.
    const stream = (log as unknown as Record<symbol, { sync?: boolean; fd?: number }>)[pino.symbols.streamSym];
    expect(stream?.sync).toBe(false);
    expect(stream?.fd).toBe(1);
  });
});
