import { schemas } from "../src/schema/index.js";

describe("schema registry", () => {
  it("compiles every schema in schemas/", () => {
    expect(schemas().names()).toEqual(expect.arrayContaining(["clean-clone-result", "provision-receipt"]));
  });
  it("names the JSON path of an offending value", () => {
    const issues = schemas().issues("clean-clone-result", { ran: false, command: "npm test", durationMs: 1, exitCode: 1, extra: 1 });
    expect(issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(["$.extra"]));
  });
});
