/** The data-directory lock within one process: the refusal names its holder and since when; a release frees it. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { claimHarnessHome, HarnessHomeInUseError, newLockOwner, retireLockOwner } from "../../../src/queue/index.js";
import { tempDir } from "../helpers.js";

describe("claimHarnessHome", () => {
  it("refuses a second claim while the first is held, naming the holder's pid and since when, and allows one after release", async () => {
    const { dir, remove } = await tempDir("harness-home-lock-");
    const home = join(dir, "home");
    try {
      const first = await claimHarnessHome(home);
      const { at } = JSON.parse(readFileSync(join(home, "harness.lock"), "utf8")) as { at: string };
      const refused = await claimHarnessHome(home).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(HarnessHomeInUseError);
      const error = refused as HarnessHomeInUseError;
      expect(error.name).toBe("HarnessHomeInUseError");
      expect(error.failureClass).toBe("environment");
      expect(error.harnessHome).toBe(home);
      expect(error.holder).toEqual(first.owner);
      expect(error.message).toBe(
        `HARNESS_HOME ${home} is in use by another story-harness process (pid ${process.pid}, since ${at}); ` +
          "one App per data directory: stop that process, or give this one its own HARNESS_HOME",
      );
      await first.release();
      const second = await claimHarnessHome(home);
      await second.release();
    } finally {
      await remove();
    }
  });

  it("says what it knows of a holder: nothing of one that is gone, no time when the lock did not say", () => {
    const rule = "one App per data directory: stop that process, or give this one its own HARNESS_HOME";
    expect(new HarnessHomeInUseError("/h", undefined, undefined).message).toBe(`HARNESS_HOME /h is in use by another story-harness process; ${rule}`);
    const owner = newLockOwner();
    expect(new HarnessHomeInUseError("/h", owner, undefined).message).toBe(
      `HARNESS_HOME /h is in use by another story-harness process (pid ${owner.pid}); ${rule}`,
    );
    retireLockOwner(owner);
  });
});
