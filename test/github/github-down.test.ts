import { githubDownDelay, GITHUB_DOWN_POLICY } from "../../src/github/story/index.js";

/** An error shaped as Octokit throws them: a status, and the response's headers. */
const httpError = (status: number, headers: Record<string, string> = {}, message = "failed"): Error =>
  Object.assign(new Error(message), { name: "HttpError", status, response: { headers } });

describe("githubDownDelay", () => {
  it("backs off on server errors and refused connections (octokit's status 500), doubling up to five minutes, never giving up", () => {
    expect(githubDownDelay(httpError(502), 1)).toBe(1000);
    expect(githubDownDelay(httpError(500, {}, "fetch failed"), 2)).toBe(2000);
    expect(githubDownDelay(httpError(503), 4)).toBe(8000);
    expect(githubDownDelay(httpError(502), 30)).toBe(GITHUB_DOWN_POLICY.maxDelayMs);
    expect(githubDownDelay(httpError(502), 100_000)).toBe(5 * 60_000);
  });

  it("honours retry-after on a 403 or 429", () => {
    expect(githubDownDelay(httpError(403, { "retry-after": "7" }), 1)).toBe(7000);
    expect(githubDownDelay(httpError(429, { "retry-after": "0" }), 3)).toBe(0);
  });

  it("treats final answers and errors that are not GitHub's answers as final", () => {
    for (const status of [400, 403, 404, 410, 422]) expect(githubDownDelay(httpError(status), 1)).toBeUndefined();
    expect(githubDownDelay(new TypeError("cannot read properties of undefined"), 1)).toBeUndefined();
    expect(githubDownDelay("a string", 1)).toBeUndefined();
  });
});
