// Removes the private TMPDIR of jest.global-setup.js with whatever the tests left in it.
const { rmSync } = require("fs");

module.exports = () => {
  if (process.env.CRM_JEST_TMPDIR) rmSync(process.env.CRM_JEST_TMPDIR, { recursive: true, force: true });
};
