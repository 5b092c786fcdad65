import { buildChildEnv, exec, isNeverPassed } from "../../src/exec/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const SECRETS = ["PRIVATE_KEY", "WEBHOOK_SECRET", "GITHUB_TOKEN", "GH_TOKEN"] as const;

afterAll(removeTempDirs);

describe("buildChildEnv", () => {
  const source = { PATH: "/bin", HOME: "/home/x", EXTRA: "1", UNASKED: "2", PRIVATE_KEY: "k", GH_TOKEN: "t", gh_token: "lower" };

  it("copies the base allowlist and the caller's names only", () => {
    // Strict: a name the source does not have is absent, not present as undefined (which a
    // child would see as the string "undefined").
    expect(buildChildEnv({ allow: ["EXTRA", "NOT_IN_SOURCE"] }, source)).toStrictEqual({ PATH: "/bin", HOME: "/home/x", EXTRA: "1" });
  });

  it("copies every name of the base allowlist the source has, and only when it has it", () => {
    // Spelled out, not read from BASE_ENV_ALLOWLIST: a name dropped from that list must fail here.
    const base = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "TMPDIR"];
    const full = Object.fromEntries(base.map((name) => [name, `value-of-${name}`]));
    expect(buildChildEnv({}, { ...full, NOT_LISTED: "x" })).toStrictEqual(full);
    expect(buildChildEnv(undefined, { USER: "u" })).toStrictEqual({ USER: "u" });
  });

  it("lets an explicit value win over a copied one", () => {
    expect(buildChildEnv({ allow: ["EXTRA"], set: { EXTRA: "set", PATH: "/set/bin" } }, source)).toStrictEqual({
      PATH: "/set/bin",
      HOME: "/home/x",
      EXTRA: "set",
    });
  });

  // Spelled out here, not read from the source's list: a name dropped from that list must fail this test.
  const CREDENTIALS = [
    "PRIVATE_KEY",
    "PRIVATE_KEY_PATH",
    "WEBHOOK_SECRET",
    "GITHUB_CLIENT_SECRET",
    "GITHUB_CLIENT_ID",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_PAT",
    "APP_ID",
    "WEBHOOK_PROXY_URL",
    "REDIS_URL",
    "HARNESS_STATUS_TOKEN",
  ];
  const spellings = (name: string): string[] => [name, name.toLowerCase(), name.charAt(0) + name.slice(1).toLowerCase()];

  it.each(CREDENTIALS)("never passes %s, in any case, copied from the source or set explicitly", (name) => {
    for (const spelling of spellings(name)) {
      const from = { PATH: "/bin", [spelling]: "from-source" };
      expect(buildChildEnv({ allow: [spelling] }, from)).toEqual({ PATH: "/bin" });
      expect(buildChildEnv({ set: { [spelling]: "set" } }, from)).toEqual({ PATH: "/bin" });
      expect(isNeverPassed(spelling)).toBe(true);
    }
    // Names that only resemble it pass: the list is exact, not a pattern.
    expect(buildChildEnv({ allow: [`${name}_HINT`] }, { [`${name}_HINT`]: "fine" })).toEqual({ [`${name}_HINT`]: "fine" });
  });

  it("drops the App's credentials even when allowed or set explicitly", () => {
    const env = buildChildEnv({ allow: ["PRIVATE_KEY", "gh_token"], set: { WEBHOOK_SECRET: "s", GITHUB_TOKEN: "g", FINE: "yes" } }, source);
    for (const name of SECRETS) expect(env).not.toHaveProperty(name);
    expect(env).not.toHaveProperty("gh_token");
    expect(env.FINE).toBe("yes");
  });
});

describe("exec environment", () => {
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    for (const name of [...SECRETS, "HARNESS_TEST_UNASKED", "HARNESS_TEST_ASKED"]) saved[name] = process.env[name];
    for (const name of SECRETS) process.env[name] = `secret-${name}`;
    process.env.HARNESS_TEST_UNASKED = "unasked";
    process.env.HARNESS_TEST_ASKED = "asked";
  });
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("a child printing its environment sees no secret and nothing unasked", async () => {
    const result = await exec(["env"], {
      cwd: makeTempDir(),
      env: { allow: ["HARNESS_TEST_ASKED", ...SECRETS], set: { GH_TOKEN: "set-explicitly", VISIBLE: "v" } },
      captureStdout: true,
    });
    expect(result.exitCode).toBe(0);
    const printed = result.stdout?.toString() ?? "";
    const names = printed.split("\n").map((line) => line.split("=")[0]);
    for (const name of SECRETS) expect(names).not.toContain(name);
    expect(printed).not.toContain("secret-");
    expect(printed).not.toContain("set-explicitly");
    expect(names).not.toContain("HARNESS_TEST_UNASKED");
    expect(printed).toContain("HARNESS_TEST_ASKED=asked");
    expect(printed).toContain("VISIBLE=v");
    expect(names).toContain("PATH");
  });
});
