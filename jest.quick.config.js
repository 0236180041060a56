// The quick tier (`npm run test:quick`, after the type check): the jest suite without the files
// that start an AWS stand-in (moto), a MariaDB server, the provisioning harness or the workflows'
// jobs, or that run the user's type-checking npm scripts. `npm test` runs them all; `__tests__/tiers.test.ts` holds every file to one tier, so a file
// that starts one of those cannot enter this tier unseen.
const base = require("./jest.config.js");

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testPathIgnorePatterns: [
    ...base.testPathIgnorePatterns,
    // The provisioning script run for real (MariaDB, git, stand-in servers; some with moto).
    "/__tests__/integration/",
    // moto: every example stack through the real AWS provider, the S3 backend, the user data read back, the outside
    // check of a stack outside us-east-1.
    "/__tests__/engine/(real-provider|s3-backend|user-data-readback|front-check)\\.test\\.ts$",
    // moto: the README's deploy as written, and the deploy policy under moto's IAM judge (the real provider).
    "/__tests__/engine/(readme-deploy|deploy-policy-judge)\\.test\\.ts$",
    // The engine's user data provisioning a real MariaDB.
    "/__tests__/engine/user-data\\.test\\.ts$",
    // npm run ops / secrets / doctor against moto.
    "/__tests__/scripts/(cli|ops|secrets)\\.test\\.ts$",
    // npm run synth, diff, deploy and destroy with bad settings: each runs the whole type check first.
    "/__tests__/settings/main-errors\\.test\\.ts$",
    // npm run synth, diff, deploy, destroy and check:settings without a terminal: each runs the type check first.
    "/__tests__/scripts/cdktf\\.test\\.ts$",
    // The workflows' jobs, each in a fresh clone, with moto for the deploy.
    "/__tests__/workflows/run\\.test\\.ts$",
  ],
};
