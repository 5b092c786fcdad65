/** Jest runs TypeScript through ts-jest as ESM; type checking is `tsc`'s job, so ts-jest only transpiles. */
export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  transform: {
    "^.+\\.ts$": ["ts-jest", { useESM: true, diagnostics: false }],
  },
  globalSetup: "<rootDir>/test/global-setup.mjs",
  // A guard against a hang, not a budget: on a loaded 2-core machine a story test with real git
  // and agent processes can take minutes; a test that waits on a condition has its own deadline.
  testTimeout: 240000,
  maxWorkers: 2,
};
