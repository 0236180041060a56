// The boot test's jest environment: jest's node environment, plus a stop on SIGTERM or SIGINT (npm test
// stopped: scripts/ci/phases.sh sends SIGTERM to the boot lane). jest itself has no handler for either, so
// without this the signal ends it at once and no afterAll runs. With it, the tests not yet started fail
// without running, and the running one is told through `globalThis.crmBootStop` (an AbortSignal: vm.ts
// kills its VMs, so every wait on them ends), so that afterAll still stops moto and the stand-in servers,
// removes the work directory and prints the figures.
const { TestEnvironment } = require("jest-environment-node");

const SIGNALS = ["SIGTERM", "SIGINT"];

class BootEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.stop = new AbortController();
    this.global.crmBootStop = this.stop.signal;
    this.onSignal = (signal) => {
      if (this.stop.signal.aborted) return;
      process.stderr.write(`boot test: ${signal}: stopping (the tests not yet started fail, afterAll runs)\n`);
      this.stop.abort(new Error(`stopped by ${signal}`));
    };
    for (const signal of SIGNALS) process.on(signal, this.onSignal);
  }

  async handleTestEvent(event) {
    if (event.name === "test_fn_start" && this.stop.signal.aborted) {
      event.test.errors.push(new Error(`not run: the boot test was ${this.stop.signal.reason.message}`));
    }
  }

  async teardown() {
    for (const signal of SIGNALS) process.off(signal, this.onSignal);
    await super.teardown();
  }
}

module.exports = BootEnvironment;
