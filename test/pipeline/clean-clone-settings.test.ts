import { removeTempDirs } from "../support/tmp.js";
import { makeScenario, ofKind, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

describe("clean_clone settings reach the check", () => {
  it("depth and provision from .github/harness.yml shape the clean clone", async () => {
    const s = await makeScenario();
    const config = scriptedConfig(s, "complete", { extra: "clean_clone:\n  depth: 1\n  provision: true" });
    const { outcome, journal } = await runScenario(s, config);
    expect(outcome).toMatchObject({ status: "completed" });
    expect(ofKind(journal, "clean_clone.finished")[0]?.result).toMatchObject({ ran: true, exitCode: 0, depth: 1, provisioned: true, linked: [] });
  });
});
