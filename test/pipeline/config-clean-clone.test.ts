import { assertAgentEnvAllowed, parseHarnessConfig } from "../../src/pipeline/index.js";

describe("clean_clone in .github/harness.yml", () => {
  it("reads depth, env, provision and allow_external_symlinks", () => {
    const config = parseHarnessConfig(
      "clean_clone:\n  depth: 1\n  env: [PIP_INDEX_URL]\n  provision: true\n  allow_external_symlinks: true\n  interpreter: /usr/bin/python3\n",
      ".github/harness.yml",
    );
    expect(config.cleanClone).toEqual({ depth: 1, env: ["PIP_INDEX_URL"], provision: true, allowExternalSymlinks: true, interpreter: "/usr/bin/python3" });
  });

  it.each([
    ["clean_clone:\n  depth: 0\n", /\$\.clean_clone\.depth/],
    ["clean_clone:\n  depth: 1.5\n", /\$\.clean_clone\.depth/],
    ["clean_clone:\n  env: [not-a-name]\n", /\$\.clean_clone\.env\[0\]/],
    ["clean_clone:\n  provision: yes please\n", /\$\.clean_clone\.provision/],
    ["clean_clone:\n  dept: 1\n", /\$\.clean_clone\.dept is not an allowed key/],
  ])("refuses %j naming the key", (text, message) => {
    expect(() => parseHarnessConfig(text, ".github/harness.yml")).toThrow(message);
  });

  it("passes only variables the operator allows; the error names the key", () => {
    const config = parseHarnessConfig("clean_clone:\n  env: [PIP_INDEX_URL, AWS_SECRET]\n", ".github/harness.yml");
    expect(() => assertAgentEnvAllowed(config, ["PIP_INDEX_URL", "AWS_SECRET"], "x")).not.toThrow();
    expect(() => assertAgentEnvAllowed(config, ["PIP_INDEX_URL"], ".github/harness.yml")).toThrow(
      ".github/harness.yml: $.clean_clone.env[1] asks for 'AWS_SECRET', which the operator does not allow (HARNESS_AGENT_ENV)",
    );
  });
});
