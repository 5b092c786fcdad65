/**
 * A `node_modules` pnpm installed is compared with the committed `pnpm-lock.yaml` before the
 * clean clone links it: a package at the top the lockfile's root importer does not list, one it
 * lists that is absent, one linked to another version of the store, and a graph below the top
 * (pnpm's `.pnpm/lock.yaml`) that is not the committed one. Each format pnpm writes (5.4, 6.0,
 * 9.0) is read; one it does not, or a file that is not what it claims, is not compared, named.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compareInstallWithLock, describeInstallDifference } from "../../src/workspace/clean-clone/installed-vs-lock.js";
import { removeTemps, temp } from "./clean-clone-fixtures.js";
import { linkTop, modulesYaml, pnpmLock, pnpmProject, storePackage, type Dependency, type PnpmFormat } from "./pnpm-layout.js";

afterAll(removeTemps);

const DIRECT: Dependency[] = [
  { name: "dep", version: "1.0.0" },
  { name: "@scope/tool", version: "2.0.0", field: "devDependencies" },
];
const GRAPH = ["@scope/tool@2.0.0", "dep@1.0.0", "sub@1.0.0"];

function project(format: PnpmFormat = 9, direct = DIRECT, graph = GRAPH): string {
  const dir = temp("pnpm-lock-");
  pnpmProject(dir, format, direct, graph);
  return dir;
}

const compare = (dir: string) => compareInstallWithLock(join(dir, "node_modules"), dir);

describe.each([5, 6, 9] as const)("a pnpm install against a lockfile of format %s", (format) => {
  it("matches when the top and the graph are the lockfile's", async () => {
    expect(await compare(project(format))).toEqual({ state: "matches" });
  });

  it("names a package at the top the root importer does not list as extraneous", async () => {
    const dir = project(format);
    linkTop(join(dir, "node_modules"), "extra@3.1.0");
    expect(await compare(dir)).toEqual({
      state: "differs",
      extraneous: ["extra@3.1.0"],
      missing: [],
      otherVersion: [],
      reinstall: "pnpm install --frozen-lockfile",
    });
  });

  it("names a listed package absent from the top as missing", async () => {
    const dir = project(format);
    rmSync(join(dir, "node_modules", "@scope", "tool"));
    expect(await compare(dir)).toMatchObject({ state: "differs", extraneous: [], missing: ["@scope/tool@2.0.0"], otherVersion: [] });
  });

  it("names a package linked to another version of the store", async () => {
    const dir = project(format);
    rmSync(join(dir, "node_modules", "dep"));
    linkTop(join(dir, "node_modules"), "dep@1.1.0");
    expect(await compare(dir)).toMatchObject({ state: "differs", extraneous: [], missing: [], otherVersion: ["dep (installed 1.1.0, locked 1.0.0)"] });
  });

  it("names a package of the graph below the top that pnpm installed at another version (left from another branch)", async () => {
    const dir = project(format);
    // The committed lockfile moved sub to 1.2.0; the install is still the old one.
    writeFileSync(join(dir, "pnpm-lock.yaml"), pnpmLock(format, DIRECT, ["@scope/tool@2.0.0", "dep@1.0.0", "sub@1.2.0"]));
    expect(await compare(dir)).toMatchObject({ state: "differs", extraneous: [], missing: [], otherVersion: ["sub (installed 1.0.0, locked 1.2.0)"] });
  });
});

describe("a pnpm install, beyond the three differences", () => {
  it("lets an optional dependency be absent (another platform's) and a publicly hoisted package be present", async () => {
    const dir = project(9, [...DIRECT, { name: "fsevents", version: "2.3.3", field: "optionalDependencies" }], GRAPH);
    rmSync(join(dir, "node_modules", "fsevents"));
    const nodeModules = join(dir, "node_modules");
    writeFileSync(join(nodeModules, ".modules.yaml"), modulesYaml(["sub@1.0.0"]));
    linkTop(nodeModules, "sub@1.0.0");
    expect(await compare(dir)).toEqual({ state: "matches" });
  });

  it("reads the version of a folder at the top when pnpm hoists like npm (nodeLinker: hoisted)", async () => {
    const dir = project(9);
    const nodeModules = join(dir, "node_modules");
    rmSync(join(nodeModules, "dep"));
    mkdirSync(join(nodeModules, "dep"));
    writeFileSync(join(nodeModules, "dep", "package.json"), JSON.stringify({ name: "dep", version: "0.9.0" }));
    expect(await compare(dir)).toMatchObject({ state: "differs", otherVersion: ["dep (installed 0.9.0, locked 1.0.0)"] });
  });

  it("is not compared, naming the version, for a lockfile format it does not read", async () => {
    const dir = project(9);
    writeFileSync(join(dir, "pnpm-lock.yaml"), "lockfileVersion: '12.0'\nimporters: {}\n");
    expect(await compare(dir)).toEqual({
      state: "not-compared",
      why: expect.stringMatching(/^pnpm-lock\.yaml has lockfileVersion "12\.0", a format this check does not read/),
    });
  });

  it("is not compared, naming the file, when the committed lockfile is not YAML", async () => {
    const dir = project(9);
    writeFileSync(join(dir, "pnpm-lock.yaml"), "lockfileVersion: '9.0'\nimporters: [unclosed\n");
    expect(await compare(dir)).toEqual({ state: "not-compared", why: "pnpm-lock.yaml is not valid YAML" });
  });

  it("does not read pnpm's record through a symlink planted to a file outside (a secret), and says so", async () => {
    const dir = project(9);
    const secret = join(temp("pnpm-secret-"), "secret.yaml");
    writeFileSync(secret, "hoistedDependencies: {}\n");
    const record = join(dir, "node_modules", ".modules.yaml");
    rmSync(record);
    symlinkSync(secret, record);
    expect(await compare(dir)).toEqual({ state: "not-compared", why: "node_modules/.modules.yaml is a symlink, which is not followed" });
  });

  it("does not read a package's version through a package.json that is a symlink out of node_modules", async () => {
    const dir = project(9);
    const outside = temp("pnpm-outside-");
    writeFileSync(join(outside, "package.json"), JSON.stringify({ name: "dep", version: "1.0.0" }));
    const nodeModules = join(dir, "node_modules");
    // A hoisted-style folder whose package.json would claim the locked version, from outside.
    rmSync(join(nodeModules, "dep"));
    mkdirSync(join(nodeModules, "dep"));
    symlinkSync(join(outside, "package.json"), join(nodeModules, "dep", "package.json"));
    expect(await compare(dir)).toMatchObject({ state: "differs", otherVersion: ["dep (installed ?, locked 1.0.0)"] });
  });

  it("does not take a link at the top that leads out of the store for the locked version", async () => {
    const dir = project(9);
    const outside = temp("pnpm-outside-");
    writeFileSync(join(outside, "package.json"), JSON.stringify({ name: "dep", version: "1.0.0" }));
    rmSync(join(dir, "node_modules", "dep"));
    symlinkSync(outside, join(dir, "node_modules", "dep"));
    expect(await compare(dir)).toMatchObject({ state: "differs", otherVersion: ["dep (installed a link outside the store, locked 1.0.0)"] });
  });

  it("names the tool's own command in the refusal", async () => {
    const dir = project(9);
    linkTop(join(dir, "node_modules"), "extra@3.1.0");
    const comparison = await compare(dir);
    if (comparison.state !== "differs") throw new Error(`expected a difference, got ${JSON.stringify(comparison)}`);
    expect(describeInstallDifference("node_modules", comparison)).toMatch(
      /the one CI runs after pnpm install --frozen-lockfile \(installed but not in the committed lockfile: extra@3\.1\.0\); run pnpm install --frozen-lockfile, or provision/,
    );
  });

  it("is not compared when node_modules was installed by npm but only pnpm-lock.yaml is committed", async () => {
    const dir = project(9);
    rmSync(join(dir, "node_modules", ".modules.yaml"));
    writeFileSync(join(dir, "node_modules", ".package-lock.json"), JSON.stringify({ lockfileVersion: 3, packages: {} }));
    storePackage(join(dir, "node_modules"), "unused@1.0.0");
    expect(await compare(dir)).toEqual({ state: "not-compared", why: "node_modules was installed by npm, but the committed lockfile is pnpm-lock.yaml" });
  });
});
