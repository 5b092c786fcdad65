/**
 * The BullMQ adapter's pure parts: its names in Redis (a contract with every other process and
 * version reading the same Redis, and with operators), the reading of `HARNESS_QUEUE`, and the
 * story-job check on write and on read. No Redis needed.
 */
import { adapterKeys, KEY_PREFIX, QUEUE_NAME, storyJobId } from "../../../src/queue/bullmq/keys.js";
import { parseRedisUrl, QueueUrlError, redactUrl } from "../../../src/queue/bullmq/connection.js";
import { checkStoryJob, readStoryJob } from "../../../src/queue/bullmq/story-data.js";
import { SchemaValidationError } from "../../../src/schema/index.js";
import { makeJob } from "../helpers.js";

describe("BullMQ adapter: names in Redis", () => {
  it("names one job per story, encoded so that no story key can hold a colon", () => {
    expect(storyJobId("acme/widgets#5")).toBe("story-acme%2Fwidgets%235");
    expect(storyJobId("a:b")).toBe("story-a%3Ab");
    expect(`${KEY_PREFIX}:${QUEUE_NAME}`).toBe("harness:stories");
  });

  it("keeps the adapter's own keys beside the queue's, under its prefix", () => {
    const keys = adapterKeys();
    expect(keys.delivery("d-1")).toBe("harness:stories:harness:delivery:d-1");
    expect(keys.runs).toBe("harness:stories:harness:runs");
    expect(keys.slots(7)).toBe("harness:stories:harness:slots:7");
    expect(keys.workers).toBe("harness:stories:harness:workers");
    expect(keys.worker("host:abc")).toBe("harness:stories:harness:worker:host:abc");
    expect(keys.quarantine).toBe("harness:stories:harness:quarantine");
    const other = adapterKeys("t1", "q2");
    expect(other.delivery("event:x")).toBe("t1:q2:harness:delivery:event:x");
    expect(other.slots(1)).not.toBe(other.slots(2));
    expect(other.worker("a")).not.toBe(other.worker("b"));
  });
});

describe("BullMQ adapter: HARNESS_QUEUE", () => {
  const refusal = (value: string, variable?: string): QueueUrlError => {
    try {
      parseRedisUrl(value, variable);
    } catch (error) {
      if (error instanceof QueueUrlError) return error;
      throw error;
    }
    throw new Error(`'${value}' was accepted`);
  };

  it("accepts redis:// and rediss:// with a host, an optional port and a database of one or two digits", () => {
    expect(parseRedisUrl("redis://localhost:6379/0")).toEqual({ url: "redis://localhost:6379/0", display: "redis://localhost:6379/0" });
    expect(parseRedisUrl("rediss://cache")).toEqual({ url: "rediss://cache", display: "rediss://cache" });
    expect(parseRedisUrl("redis://cache:6379/15").url).toBe("redis://cache:6379/15");
    expect(parseRedisUrl("redis://cache:6379/").url).toBe("redis://cache:6379/");
    expect(parseRedisUrl("redis://user:pw@cache/3")).toEqual({ url: "redis://user:pw@cache/3", display: "redis://user:***@cache/3" });
  });

  it("refuses anything else with a usage error naming the variable and the rule", () => {
    const notUrl = refusal("cache:6379 with:pw@x");
    expect(notUrl.message).toBe("HARNESS_QUEUE must start with redis:// or rediss://, got 'cache:'");
    const unparsable = refusal("not a url :s3cret@");
    expect(unparsable.message).toBe("HARNESS_QUEUE must be a redis:// URL such as redis://localhost:6379/0, got '***@'");
    expect(refusal("//:s3cret@x", "REDIS").message).toBe("REDIS must be a redis:// URL such as redis://localhost:6379/0, got '//***@x'");
    // No parser reads it, so nothing tells where a password with a '/' ends: all before the last '@' is hidden.
    expect(refusal("redis://user:pa/ss@cache:6379/0").message).toBe(
      "HARNESS_QUEUE must be a redis:// URL such as redis://localhost:6379/0, got 'redis://***@cache:6379/0'",
    );
    expect(refusal("redis://u:p/a@b@h").message).toContain("got 'redis://***@h'");
    // Without an '@' there is nothing to hide; a '//' after an '@' is no scheme of the value's.
    expect(refusal("not a url").message).toContain("got 'not a url'");
    expect(refusal("@not a url").message).toContain("got '***@not a url'");
    expect(refusal("a b@c//d@e").message).toContain("got '***@e'");
    expect(refusal("http://cache:6379").message).toBe("HARNESS_QUEUE must start with redis:// or rediss://, got 'http:'");
    expect(refusal("redis:///0").message).toBe("HARNESS_QUEUE names no host");
    expect(refusal("redis://cache/zero", "Q").message).toBe("Q: the database must be a number (redis://host:6379/0), got '/zero'");
    for (const db of ["123", "1x", "x1", "1/2", "-1"]) expect(refusal(`redis://cache/${db}`).message).toContain(`got '/${db}'`);
    expect(notUrl).toBeInstanceOf(Error);
    expect(notUrl.name).toBe("QueueUrlError");
    expect(notUrl.failureClass).toBe("usage");
  });

  it("hides a password in what it prints, and only the password", () => {
    expect(redactUrl("redis://:s3cret@cache:6380/2")).toBe("redis://:***@cache:6380/2");
    expect(redactUrl("redis://user:s3:cr:et@cache")).toBe("redis://user:***@cache");
    expect(redactUrl("rediss://u-1.x:p@h/0")).toBe("rediss://u-1.x:***@h/0");
    expect(redactUrl("redis://user@cache:6379/0")).toBe("redis://user@cache:6379/0");
    expect(redactUrl("redis://cache:6379/0")).toBe("redis://cache:6379/0");
    expect(redactUrl("redis://cache:6379/a:b@c")).toBe("redis://cache:6379/a:b@c");
    expect(redactUrl("x redis://a:b@c")).toBe("x redis://a:***@c");
    // What follows the host's '/' is a path, not a password.
    expect(redactUrl("redis://a/b:c@d")).toBe("redis://a/b:c@d");
  });

  it("ends the credentials at the last '@' before the host, so an unencoded '@' hides nothing", () => {
    const forms: Array<[string, string, string, string]> = [
      // [url, redacted, user name and password as a URL parser reads them]
      ["redis://a@b:c@d", "redis://a@b:***@d", "a%40b", "c"],
      ["redis://u:p@ss@h:6379/0", "redis://u:***@h:6379/0", "u", "p%40ss"],
      ["rediss://a@b:p@q@h/1", "rediss://a@b:***@h/1", "a%40b", "p%40q"],
      ["redis://a@b@c:p@h:1/0", "redis://a@b@c:***@h:1/0", "a%40b%40c", "p"],
      ["redis://a:b:c@d@e/0", "redis://a:***@e/0", "a", "b%3Ac%40d"],
      ["redis://:@p@h", "redis://:***@h", "", "%40p"],
      ["redis://u@:p@h", "redis://u@:***@h", "u%40", "p"],
      ["redis://u:p q@h", "redis://u:***@h", "u", "p%20q"],
    ];
    for (const [url, redacted, username, password] of forms) {
      const parsed = new URL(url);
      expect([parsed.username, parsed.password]).toEqual([username, password]);
      expect(redactUrl(url)).toBe(redacted);
      expect(new URL(redacted).username).toBe(username);
      expect(new URL(redacted).host).toBe(parsed.host);
      expect(parseRedisUrl(url).display).toBe(redacted);
    }
    // A user name with an '@' and no password is not a password.
    expect(redactUrl("redis://a@b@cache:6379/0")).toBe("redis://a@b@cache:6379/0");
    expect(redactUrl("redis://a@cache:6379")).toBe("redis://a@cache:6379");
    // In a message: the URL's password goes, the path and what follows the URL stay.
    expect(redactUrl("got 'redis://a@b:c@d/0', want x@y/z")).toBe("got 'redis://a@b:***@d/0', want x@y/z");
    expect(redactUrl("redis://a@b:c@d/e:f@g")).toBe("redis://a@b:***@d/e:f@g");
  });
});

describe("BullMQ adapter: story jobs on write and on read", () => {
  it("passes a story job through and refuses another, naming the story and the field", () => {
    const job = makeJob(3);
    expect(checkStoryJob(job)).toBe(job);
    const bad = { ...job, installationId: "one" } as unknown as typeof job;
    expect(() => checkStoryJob(bad)).toThrow(SchemaValidationError);
    expect(() => checkStoryJob(bad)).toThrow(/^queue job of acme\/widgets#3: \$\.installationId /);
  });

  it("reads back a story job, and nothing else", () => {
    const job = makeJob(4);
    expect(readStoryJob(JSON.parse(JSON.stringify(job)))).toEqual(job);
    expect(readStoryJob({ ...job, kind: "rebuild-everything" })).toBeUndefined();
    expect(readStoryJob(null)).toBeUndefined();
  });
});
