/** Provisioning settings: what each unusable value is told, and what a valid one becomes. */
import { ProvisionConfigError, validateProvisionConfig, type ProvisionConfig } from "../../src/workspace/index.js";

const validate = (config: unknown) => validateProvisionConfig(config as ProvisionConfig);
const failure = (config: unknown): ProvisionConfigError => {
  try {
    validate(config);
  } catch (error) {
    if (error instanceof ProvisionConfigError) return error;
    throw error;
  }
  throw new Error("expected a ProvisionConfigError");
};

describe("ProvisionConfigError", () => {
  it("names the field, the reason and the value it got", () => {
    expect(failure({ timeoutMs: "100" })).toMatchObject({
      name: "ProvisionConfigError",
      field: "timeoutMs",
      value: "100",
      message: 'provision.timeoutMs must be a positive integer of milliseconds, got "100"',
    });
    expect(failure({ command: "  " }).message).toBe('provision.command must not be empty, got "  "');
    expect(failure({ command: 42 }).message).toBe("provision.command must be a string, got 42");
    expect(failure({ env: "PATH" }).message).toBe('provision.env must be an object, got "PATH"');
    expect(failure({ env: { set: { A: 1 } } }).message).toBe('provision.env.set must map names to string values, got {"A":1}');
    expect(new ProvisionConfigError("command", undefined, "is required").message).toBe("provision.command is required, got nothing");
  });

  it("describes a value JSON cannot spell by its string form", () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(failure({ env: { allow: loop } }).message).toBe("provision.env.allow must be a list of variable names, got [object Object]");
    expect(failure({ command: Symbol.for("x") }).message).toBe("provision.command must be a string, got Symbol(x)");
  });
});

describe("validateProvisionConfig", () => {
  it("takes nothing, or an empty object, as the defaults", () => {
    expect(validate(undefined)).toEqual({ timeoutMs: 600_000, env: {} });
    expect(validate({})).toEqual({ timeoutMs: 600_000, env: {} });
    expect(validate(null)).toEqual({ timeoutMs: 600_000, env: {} });
  });

  it("refuses settings that are not an object", () => {
    for (const config of [[], "npm ci", 3])
      expect(failure(config)).toMatchObject({ field: "", message: expect.stringMatching(/^provision\. must be an object, got /) });
  });

  it("keeps a valid command, timeout and environment as given", () => {
    const env = { allow: ["NPM_TOKEN", "CI"], set: { NODE_ENV: "test" } };
    expect(validate({ command: "make deps", timeoutMs: 1500, env })).toEqual({ command: "make deps", timeoutMs: 1500, env });
    expect(validate({ env: { allow: [] } })).toEqual({ timeoutMs: 600_000, env: { allow: [] } });
    expect(validate({ env: { set: {} } })).toEqual({ timeoutMs: 600_000, env: { set: {} } });
  });

  it.each<[string, unknown]>([
    ["env", "PATH"],
    ["env", null],
    ["env", ["PATH"]],
    ["env.allow", "PATH"],
    ["env.allow", ["PATH", ""]],
    ["env.allow", ["PATH", 3]],
    ["env.set", null],
    ["env.set", ["A=1"]],
    ["env.set", "A=1"],
    ["env.set", { A: "1", B: 2 }],
  ])("refuses %s = %p", (field, value) => {
    const config = field === "env" ? { env: value } : { env: { [field.slice(4)]: value } };
    expect(failure(config)).toMatchObject({ field, value, failureClass: "config-invalid" });
  });

  it("refuses a timeout beyond the safe integers", () => {
    expect(failure({ timeoutMs: 2 ** 53 }).field).toBe("timeoutMs");
    expect(validate({ timeoutMs: 1 }).timeoutMs).toBe(1);
  });
});
