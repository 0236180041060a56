/**
 * The bound of a hook that stops what a test started. Each stop is bounded itself (SIGTERM, then SIGKILL after a
 * grace: MariaDB 15 s, moto 5 s), but a file without its own jest.setTimeout leaves such a hook jest's default 5 s,
 * which a loaded machine passes: CI of dbf9887 failed a suite whose every test passed, on the two moto servers the
 * deploy-policy judge stops together. Two minutes covers the longest hook (two harnesses, or the boot test's VMs).
 */
export const TEARDOWN_MS = 120_000;
