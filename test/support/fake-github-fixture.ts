/**
 * The one way a test file holds the strict fake GitHub: started before its tests, checked after
 * each test and after all of them for requests it refused (an unexpected request fails the test
 * that made it, not a later one), and stopped after them even when a test or the check failed.
 */
import { afterAll, afterEach, beforeAll } from "@jest/globals";
import { startFakeGitHub, type FakeGitHub, type FakeGitHubOptions } from "./fake-github/index.js";

/**
 * Registers the fake GitHub in the calling `describe` (or file) and returns it: a stand-in usable
 * from the first `beforeAll` declared after this call on. A test that provokes an unexpected request
 * on purpose takes it (`takeUnexpectedRequests()`) and asserts on it itself.
 *
 * jest runs `afterAll` hooks in the order they are declared: a file whose own teardown stops something
 * that still talks to the fake (an App, an outbox, a webhook receiver) declares that `afterAll` before
 * this call, so the fake stops last.
 */
export function useFakeGitHub(options: FakeGitHubOptions = {}): FakeGitHub {
  let fake: FakeGitHub | undefined;
  const started = (): FakeGitHub => {
    if (fake === undefined) throw new Error("the fake GitHub is used before its beforeAll started it (call useFakeGitHub() above the hooks that use it)");
    return fake;
  };
  beforeAll(async () => {
    fake = await startFakeGitHub(options);
  });
  afterEach(() => {
    fake?.assertNoUnexpectedRequests();
  });
  afterAll(async () => {
    try {
      fake?.assertNoUnexpectedRequests();
    } finally {
      await fake?.close();
    }
  });
  // The fake itself once started: methods are bound to it, so the stand-in can be passed anywhere a FakeGitHub goes.
  return new Proxy({} as FakeGitHub, {
    get(_target, property) {
      const value: unknown = Reflect.get(started(), property);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(started()) : value;
    },
    has: (_target, property) => Reflect.has(started(), property),
  });
}
