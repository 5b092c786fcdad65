import { createPrivateKey, createSign } from "node:crypto";
import { appKeyForProcess, basicCredentials, credentialOf, FakeAuthError, TokenStore, verifyAppJwt } from "./auth.js";
import { parseCgiResponse } from "./git-http.js";
import { compileRequestValidators, requestBodyProblems } from "./openapi-validate.js";
import { Router } from "./router.js";
import { REST_ROUTES, type Route } from "./routes/index.js";

const APP_ID = 99;

function jwt(claims: Record<string, unknown>, alg = "RS256"): string {
  const header = Buffer.from(JSON.stringify({ alg, typ: "JWT" })).toString("base64url");
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  const signature = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(createPrivateKey(appKeyForProcess().privateKeyPem)).toString("base64url");
  return `${header}.${payload}.${signature}`;
}

function reasonOf(work: () => void): string | undefined {
  try {
    work();
    return undefined;
  } catch (error) {
    return error instanceof FakeAuthError ? error.reason : "other";
  }
}

describe("fake GitHub units: App JWT", () => {
  const now = Math.floor(Date.now() / 1000);
  const { publicKey } = appKeyForProcess();

  it("accepts a JWT as GitHub's App auth makes it (iat 30 s back, ten minutes)", () => {
    expect(reasonOf(() => verifyAppJwt(jwt({ iss: APP_ID, iat: now - 30, exp: now + 570 }), APP_ID, publicKey))).toBeUndefined();
    expect(reasonOf(() => verifyAppJwt(jwt({ iss: String(APP_ID), iat: now - 30, exp: now + 570 }), APP_ID, publicKey))).toBeUndefined();
  });

  it("refuses a wrong issuer, a lifetime over ten minutes, an expired token, another algorithm, garbage", () => {
    expect(reasonOf(() => verifyAppJwt(jwt({ iss: 1, iat: now, exp: now + 60 }), APP_ID, publicKey))).toBe("wrong-issuer");
    expect(reasonOf(() => verifyAppJwt(jwt({ iss: APP_ID, iat: now, exp: now + 3600 }), APP_ID, publicKey))).toBe("expired");
    expect(reasonOf(() => verifyAppJwt(jwt({ iss: APP_ID, iat: now - 900, exp: now - 300 }), APP_ID, publicKey))).toBe("expired");
    expect(reasonOf(() => verifyAppJwt(jwt({ iss: APP_ID, iat: now, exp: now + 60 }, "HS256"), APP_ID, publicKey))).toBe("malformed");
    expect(reasonOf(() => verifyAppJwt("not.a.jwt", APP_ID, publicKey))).toBe("malformed");
    const valid = jwt({ iss: APP_ID, iat: now, exp: now + 60 });
    const tampered = valid.replace(/\.[^.]+\./, `.${Buffer.from(JSON.stringify({ iss: APP_ID, iat: now, exp: now + 500 })).toString("base64url")}.`);
    expect(reasonOf(() => verifyAppJwt(tampered, APP_ID, publicKey))).toBe("bad-signature");
  });
});

describe("fake GitHub units: credentials and tokens", () => {
  it("reads token, Bearer and Basic credentials", () => {
    expect(credentialOf("token ghs_abc")).toBe("ghs_abc");
    expect(credentialOf("Bearer x.y.z")).toBe("x.y.z");
    expect(credentialOf("Basic abc")).toBeUndefined();
    expect(basicCredentials(`Basic ${Buffer.from("x-access-token:ghs_1:2").toString("base64")}`)).toEqual({ user: "x-access-token", password: "ghs_1:2" });
  });

  it("issues distinct tokens that expire", () => {
    const store = new TokenStore();
    const first = store.issue(1, {});
    const second = store.issue(1, {}, 1);
    expect(first.token).not.toBe(second.token);
    expect(first.token).toMatch(/^ghs_[A-Za-z0-9]{36}$/);
    expect(store.check(first.token).installationId).toBe(1);
    expect(() => store.check(second.token, Date.now() + 5)).toThrow(FakeAuthError);
    expect(() => store.check("ghs_unknown")).toThrow(FakeAuthError);
  });
});

describe("fake GitHub units: routing, CGI, OpenAPI", () => {
  const route = (method: Route["method"], template: string): Route => ({ method, template, auth: "none", handle: () => ({ status: 200 }) });

  it("prefers literal segments and lets {path} span folders", () => {
    const router = new Router([
      route("GET", "/repos/{owner}/{repo}/issues/{issue_number}"),
      route("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
      route("GET", "/repos/{owner}/{repo}/contents/{path}"),
    ]);
    expect(router.match("GET", "/repos/o/r/issues/comments/5")?.route.template).toBe("/repos/{owner}/{repo}/issues/comments/{comment_id}");
    expect(router.match("GET", "/repos/o/r/issues/7")?.params).toEqual({ owner: "o", repo: "r", issue_number: "7" });
    expect(router.match("GET", "/repos/o/r/contents/.github%2Fharness.yml")?.params.path).toBe(".github/harness.yml");
    expect(router.match("GET", "/repos/o/r/contents/a/b/c.txt")?.params.path).toBe("a/b/c.txt");
    expect(router.match("POST", "/repos/o/r/issues/7")).toBeUndefined();
  });

  it("splits a CGI response into status, headers and body", () => {
    const parsed = parseCgiResponse(Buffer.from("Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nnope"));
    expect(parsed).toEqual({ status: 404, headers: [["Content-Type", "text/plain"]], body: Buffer.from("nope") });
    expect(parseCgiResponse(Buffer.from("Content-Type: x\n\nbody")).status).toBe(200);
  });

  it("honours OpenAPI 3.0 nullable, enums with null, and overlapping oneOf", () => {
    const template = "/repos/{owner}/{repo}/issues/{issue_number}";
    expect(requestBodyProblems("PATCH", template, { milestone: null, assignee: null, state_reason: null })).toEqual([]);
    expect(requestBodyProblems("PATCH", template, { milestone: 3 })).toEqual([]);
    expect(requestBodyProblems("PATCH", template, { milestone: { id: 3 } }).length).toBeGreaterThan(0);
    expect(requestBodyProblems("PATCH", template, { state_reason: "bored" }).join(" ")).toMatch(/state_reason/);
    expect(requestBodyProblems("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels", { labels: ["a", { name: "b" }] })).toEqual([]);
    expect(() => requestBodyProblems("GET", "/no/such/operation", undefined)).toThrow(/not an operation/);
  });

  it("compiles the request validators of operations ahead of use: those with a JSON body count, every route is an operation", () => {
    expect(
      compileRequestValidators([
        { method: "POST", template: "/repos/{owner}/{repo}/check-runs" },
        { method: "GET", template: "/repos/{owner}/{repo}" },
      ]),
    ).toBe(1);
    expect(() => compileRequestValidators([{ method: "GET", template: "/no/such/operation" }])).toThrow(/not an operation/);
    const withBody = REST_ROUTES.filter((route) => ["POST", "PATCH", "PUT"].includes(route.method) && !route.template.endsWith("/access_tokens")).length;
    expect(compileRequestValidators(REST_ROUTES)).toBeGreaterThanOrEqual(withBody);
  });
});
