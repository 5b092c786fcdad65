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
  testTimeout: 60000,
  maxWorkers: 2,
};
