/**
 * The boot test's variants of the settings, each a new host booted once from its own user data (read
 * back from moto's EC2, as first-boot.boot.ts does for hosts A and B): host D, the scale-out topology
 * (host-d.ts), and host C, a domain with HTTPS (host-c.ts). Neither needs hosts A or B, so `npm test`
 * runs this file beside first-boot.boot.ts, as a phase of its own (scripts/check.sh). Each check is
 * printed as a figure at the end, then `boot: N passed, N failed` (boot-run.ts).
 */
import { join } from "path";
import { findMotoServer } from "../support/moto-server";
import { describeWithEngine } from "../support/terraform-engine";
import { TEARDOWN_MS } from "../support/teardown";
import { loadStackSettings } from "../../settings/stack-settings";
import { BootRun, bootSecrets, Figures } from "./boot-run";
import { hostC } from "./host-c";
import { hostD } from "./host-d";
import { userDataToolsMissing } from "./user-data";
import { bootToolsMissing } from "./vm";

jest.setTimeout(40 * 60_000);

const SETTINGS_FILE = join(__dirname, "settings.json");
const SECRETS = bootSecrets();
const figures = new Figures();
const { figure } = figures;

describeWithEngine(
  "the settings' variants boot a Debian 12 VM for real: the scale-out topology (host D), a domain (host C)",
  (engine) => {
    let run: BootRun | undefined;

    beforeAll(async () => {
      run = new BootRun();
      await run.prepare();
      await run.startStandIns(loadStackSettings(SETTINGS_FILE).provisioning.repoUrl, SECRETS.source_host_token);
    });

    afterAll(async () => {
      try {
        await run?.stop();
      } finally {
        figures.print();
      }
    }, TEARDOWN_MS);

    it("boots: image, accelerator", () => {
      const { image, accelNote } = run!;
      figure(
        "image",
        `${image.fsType} root, ${image.buildSeconds ? `built in ${image.buildSeconds.toFixed(0)} s` : "cached"}`,
        true,
      );
      figure("accelerator", accelNote, true);
    });

    it("host D, a host of the scale-out topology: the database over TCP as RDS's, set up by the operator's db-setup, DB_HOST in .env", () => {
      const { image, accel, standIns, moto, work } = run!;
      return hostD({
        engine,
        image,
        accel,
        standIns: standIns!,
        moto: moto!,
        work,
        settingsFile: SETTINGS_FILE,
        figure,
      });
    });

    it("host C, a new host with a domain: HTTPS from an ACME CA (Pebble), port 80 redirected, the certificate kept across a reboot", () => {
      const { image, accel, standIns, moto, work, caddy } = run!;
      return hostC({
        engine,
        moto: moto!,
        image,
        accel,
        standIns: standIns!,
        work,
        settingsFile: SETTINGS_FILE,
        secrets: SECRETS,
        caddy,
        figure,
      });
    });
  },
  [
    ...bootToolsMissing(),
    ...(findMotoServer() ? [] : ["moto_server (scripts/ci/install-tools.sh moto)"]),
    ...userDataToolsMissing(),
  ],
);
