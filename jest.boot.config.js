// The boot test (`npm run test:boot`): boots the stack's user data in a VM. Kept out of the
// default jest run (its files end in .boot.ts) because it takes minutes and needs qemu.
const base = require("./jest.config.js");

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ["**/*.boot.ts"],
  // Stops on SIGTERM or SIGINT with afterAll still run (jest alone would end at once).
  testEnvironment: "<rootDir>/__tests__/boot/environment.js",
  maxWorkers: 1,
};
