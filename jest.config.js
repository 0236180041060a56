// Transpile-only transform (@swc/jest): type checking happens once, in `tsc --noEmit`
// (see the `test` script), instead of ts-jest type-checking every file through the
// provider's typings (the figures: docs/testing.md, Benchmarks).
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/__tests__"],
  testMatch: ["**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/cdktf.out/", "/.gen/"],
  transform: {
    "^.+\\.ts$": ["@swc/jest", { jsc: { parser: { syntax: "typescript" }, target: "es2022" } }],
    // GitHub's expression evaluator (the workflow-run test) ships only ECMAScript modules.
    "/node_modules/@actions/expressions/.+\\.js$": ["@swc/jest", { jsc: { target: "es2022" } }],
  },
  transformIgnorePatterns: ["/node_modules/(?!@actions/expressions/)"],
  // Its package.json exports only `import` conditions, which jest's CommonJS resolver skips: the
  // same files, by the paths of its exports map ("." and "./*").
  moduleNameMapper: {
    "^@actions/expressions$": "<rootDir>/node_modules/@actions/expressions/dist/index.js",
    "^@actions/expressions/(.+)$": "<rootDir>/node_modules/@actions/expressions/dist/$1.js",
  },
  moduleFileExtensions: ["ts", "js", "json"],
  setupFilesAfterEnv: ["<rootDir>/setup.js"],
  globalSetup: "<rootDir>/jest.global-setup.js",
  globalTeardown: "<rootDir>/jest.global-teardown.js",
  // One worker per core (jest's default leaves one idle): much of the time goes to waiting on
  // child processes (terraform, MariaDB, bash); docs/testing.md, Benchmarks, has the figures.
  maxWorkers: "100%",
};
