/**
 * A crate whose cargo came from rustup (the usual install): `~/.cargo/bin/cargo` is a proxy that
 * looks up its toolchain in RUSTUP_HOME, by default `$HOME/.rustup`. A step's HOME is private, so
 * the proxy found no toolchain and the clean clone failed every such crate ("rustup could not
 * choose a version of cargo to run"), sandboxed or not. The proxy here is a stand-in that finds
 * its toolchain as rustup does; the toolchain it finds is the system's real cargo and rustc,
 * which build and test a real crate. The home lives in this checkout's cache folder, as a user's
 * home is outside the OS temporary folder (which the sandbox hides from steps).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { etcSecretMasks, hostRustupHome, Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { runCleanCloneCheck, type CleanCloneResult } from "../../src/workspace/index.js";
import { removeTemps, repoWith, temp, write } from "./clean-clone-fixtures.js";

const HOMES = resolve("node_modules", ".cache", "harness-home-rustup");
let home = "";

/** rustup's proxy behaviour: the program named by argv[0], from RUSTUP_HOME's default toolchain. */
const PROXY = `#!/bin/sh
home="\${RUSTUP_HOME:-$HOME/.rustup}"
toolchain=$(sed -n 's/^default_toolchain = "\\(.*\\)"$/\\1/p' "$home/settings.toml" 2>/dev/null)
if [ -z "$toolchain" ]; then
  echo "error: rustup could not choose a version of $(basename "$0") to run, because one wasn't specified explicitly, and no default is configured." >&2
  exit 1
fi
exec "$home/toolchains/$toolchain/bin/$(basename "$0")" "$@"
`;

const CRATE = {
  "Cargo.toml": '[package]\nname = "trial"\nversion = "0.1.0"\nedition = "2018"\n\n[dependencies]\n',
  "src/lib.rs":
    "pub fn double(x: u32) -> u32 {\n    x * 2\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn doubles() {\n        assert_eq!(super::double(2), 4);\n    }\n}\n",
  ".gitignore": "/target\nCargo.lock\n",
};

beforeAll(() => {
  for (const program of ["/usr/bin/cargo", "/usr/bin/rustc"])
    if (!existsSync(program)) throw new Error(`${program} is missing: these tests need the system's Rust toolchain (apt-get install -y cargo)`);
  mkdirSync(HOMES, { recursive: true });
  home = mkdtempSync(join(HOMES, "home-"));
  write(home, {
    ".cargo/bin/rustup": { content: PROXY, mode: 0o755 },
    ".rustup/settings.toml": 'version = "12"\ndefault_toolchain = "system"\n',
  });
  symlinkSync("rustup", join(home, ".cargo/bin/cargo"));
  mkdirSync(join(home, ".rustup/toolchains/system/bin"), { recursive: true });
  symlinkSync("/usr/bin/cargo", join(home, ".rustup/toolchains/system/bin/cargo"));
});
afterAll(() => {
  removeTemps();
  rmSync(home, { recursive: true, force: true });
});

async function check(settings: Record<string, string>, change: Record<string, string> = {}): Promise<CleanCloneResult> {
  // The user's RUSTUP_HOME is unset: rustup's toolchains are in the default place, the home's .rustup.
  const sandbox = new Sandbox(sandboxSettingsFromEnv(settings), { masked: etcSecretMasks(), home, rustupHome: hostRustupHome({}, home) });
  const repo = await repoWith(CRATE);
  write(repo, change);
  return runCleanCloneCheck({
    command: "cargo test --offline",
    links: [],
    sandbox,
    repo,
    scratchRoot: temp("cc-rustup-root-"),
    env: { set: { PATH: `${join(home, ".cargo/bin")}:/usr/bin:/bin` } },
    timeoutMs: 300_000,
  });
}

describe("cargo as a rustup proxy under the user's home", () => {
  it("runs the crate's tests in the sandbox: the step is told where rustup's toolchains are, and shown them read-only", async () => {
    const result = await check({});
    expect(result.outputTail).not.toContain("rustup could not choose");
    expect(result).toMatchObject({ ran: true, exitCode: 0 });
    expect(result.outputTail).toMatch(/test tests::doubles \.\.\. ok/);
  }, 300_000);

  it("runs them with the sandbox off too (the private HOME alone hid the toolchains)", async () => {
    const result = await check({ HARNESS_SANDBOX: "off" });
    expect(result).toMatchObject({ ran: true, exitCode: 0 });
    expect(result.outputTail).toMatch(/test tests::doubles \.\.\. ok/);
  }, 300_000);

  it("a change that breaks the crate's test still fails, as cargo's own failure (exit 101)", async () => {
    const result = await check(
      {},
      {
        "src/lib.rs":
          "pub fn double(x: u32) -> u32 {\n    x * 3\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn doubles() {\n        assert_eq!(super::double(2), 4);\n    }\n}\n",
      },
    );
    expect(result).toMatchObject({ ran: true, exitCode: 101 });
    expect(result.outputTail).toMatch(/test tests::doubles \.\.\. FAILED/);
  }, 300_000);
});
