// ESLint: the recommended rules of ESLint and typescript-eslint, for every TypeScript and JavaScript file
// of the project; Prettier (.prettierrc.json) owns the layout, so no rule here is about style.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "cdktf.out/", ".gen/", ".ci-cache/", "test-results/"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      // A leading underscore marks a value kept for its position (an argument, a destructured rest).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
    },
  },
  {
    // The tests walk Terraform's synthesized JSON, whose shape is the provider's schema, not a TypeScript type.
    files: ["__tests__/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // CommonJS: the jest configurations, the boot test's environment and stand-in app, and the test that reads
    // the jest configurations.
    files: ["**/*.js", "**/*.cjs", "__tests__/tiers.test.ts"],
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
