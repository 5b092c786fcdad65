import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "coverage/", "reports/", ".stryker-tmp*/", "test/fixtures/**/*.js"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        URL: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "node:child_process", message: "Run processes through src/exec." },
            { name: "child_process", message: "Run processes through src/exec." },
          ],
        },
      ],
    },
  },
  {
    // GitHub lives in one room: the runner orchestrates through the GitHub room's story adapter.
    files: ["src/runner/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "node:child_process", message: "Run processes through src/exec." },
            { name: "child_process", message: "Run processes through src/exec." },
            { name: "probot", message: "GitHub calls belong in src/github (its story adapter)." },
          ],
          patterns: [{ group: ["@octokit/*"], message: "GitHub calls belong in src/github (its story adapter)." }],
        },
      ],
    },
  },
  {
    // Every GitHub call is the GitHub room's: no other room calls octokit's REST or GraphQL API.
    files: ["src/**"],
    ignores: ["src/github/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "MemberExpression[property.name=/^(rest|graphql|paginate)$/]", message: "GitHub calls belong in src/github." },
        { selector: "MemberExpression[object.name=/octokit$/i][property.name='request']", message: "GitHub calls belong in src/github." },
      ],
    },
  },
  {
    files: ["src/exec/**"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    // Jest's global setup builds dist/ before any TypeScript (and so src/exec) can be loaded.
    files: ["test/global-setup.mjs"],
    rules: { "no-restricted-imports": "off" },
  },
);
