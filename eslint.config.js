// Flat config: typescript-eslint's recommended rules over every TypeScript source, plus the
// architectural rules the design rests on: src/core never imports vscode, and no module imports
// itself through others (import-x's no-cycle: a cycle makes load order matter and the modules one).
import js from "@eslint/js";
import { createNodeResolver, importX } from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "native-runner/**", ".vscode-test/**", "test-results/**", "**/.bprof/**", ".venv-parity/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["**/*.ts"],
    plugins: { "import-x": importX },
    settings: {
      "import-x/extensions": [".ts", ".js", ".mjs"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts"] },
      // Imports name modules without their extension, as esbuild and tsx resolve them.
      "import-x/resolver-next": [createNodeResolver({ extensions: [".ts", ".js", ".mjs", ".json"] })],
    },
    rules: {
      // Type-only imports are erased at run time, so import-x does not count them in a cycle.
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
    },
  },
  {
    files: ["src/core/**/*.ts", "src/cli/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { paths: [{ name: "vscode", message: "src/core and src/cli must not depend on VS Code." }] }],
    },
  },
  {
    files: ["scripts/**/*.{js,mjs}", "eslint.config.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
);
