// ESLint for the whole workspace: the recommended JavaScript and typescript-eslint rules, and
// eslint-plugin-svelte for the Control Room. Formatting is Prettier's job, not ESLint's.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import svelte from "eslint-plugin-svelte";
import globals from "globals";
import tseslint from "typescript-eslint";
import svelteConfig from "./console/svelte.config.js";

export default defineConfig(
  {
    ignores: [
      "**/node_modules/",
      "**/dist/",
      "**/generated/",
      "console/build/",
      "console/.svelte-kit/",
      "test/artifacts/",
      ".data/",
      ".cohent-bench/",
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  svelte.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Envelopes of unknown shape in tests and transports; typed at the edges instead.
      "@typescript-eslint/no-explicit-any": "off",
      // Untrusted peer text is cleaned by stripping control characters, on purpose.
      "no-control-regex": "off",
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
        },
      ],
    },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["console/src/**"],
    languageOptions: { globals: { ...globals.browser } },
    // The Control Room is served at the root path (no kit.paths.base): resolve() would add nothing.
    rules: { "svelte/no-navigation-without-resolve": "off" },
  },
  {
    files: ["**/*.svelte", "**/*.svelte.ts"],
    languageOptions: {
      parserOptions: { parser: tseslint.parser, extraFileExtensions: [".svelte"], svelteConfig },
    },
  },
);
