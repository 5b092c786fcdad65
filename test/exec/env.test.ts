import { buildChildEnv, exec } from "../../src/exec/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const SECRETS = ["PRIVATE_KEY", "WEBHOOK_SECRET", "GITHUB_TOKEN", "GH_TOKEN"] as const;

afterAll(removeTempDirs);

describe("buildChildEnv", () => {
  const source = { PATH: "/bin", HOME: "/home/x", EXTRA: "1", UNASKED: "2", PRIVATE_KEY: "k", GH_TOKEN: "t" };

  it("copies the base allowlist and the caller's names only", () => {
    expect(buildChildEnv({ allow: ["EXTRA"] }, source)).toEqual({ PATH: "/bin", HOME: "/home/x", EXTRA: "1" });
  });

  it("drops the App's credentials even when allowed or set explicitly", () => {
    const env = buildChildEnv({ allow: ["PRIVATE_KEY", "gh_token"], set: { WEBHOOK_SECRET: "s", GITHUB_TOKEN: "g", FINE: "yes" } }, source);
    for (const name of SECRETS) expect(env).not.toHaveProperty(name);
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
