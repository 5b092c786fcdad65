/**
 * The data-directory lock refused without a lock to read: a dangling symbolic link at its name
 * is a lock that vanishes at every read (the name exists for the claim's link, its file never
 * does), as a lock torn between the failed claim and the refusal's read would be.
 */
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { claimHarnessHome, HarnessHomeInUseError } from "../../../src/queue/index.js";
import { tempDir } from "../helpers.js";

describe("claimHarnessHome, its lock gone at every read", () => {
  it("refuses naming neither a holder nor a time", async () => {
    const { dir, remove } = await tempDir("harness-home-vanishing-");
    try {
      symlinkSync(join(dir, "nowhere"), join(dir, "harness.lock"));
      const refused = await claimHarnessHome(dir).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(HarnessHomeInUseError);
      expect((refused as HarnessHomeInUseError).holder).toBeUndefined();
      expect((refused as HarnessHomeInUseError).message).toBe(
        `HARNESS_HOME ${dir} is in use by another story-harness process; ` +
          "one App per data directory: stop that process, or give this one its own HARNESS_HOME",
      );
    } finally {
      await remove();
    }
  });
});
