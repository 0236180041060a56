/**
 * The boot test's user-data path outside the VM (__tests__/boot/user-data.ts, which every boot host's user
 * data comes through): the example stack's user data, with adversarial secrets, given to an `aws_instance`
 * that hashicorp/aws creates in moto's EC2, and read back with `aws ec2 describe-instance-attribute`. The
 * bytes read back must be the engine's rendering: the same apply's output, and a provider-free apply's
 * (the boot test's path before it went through EC2), gzip and inflated alike; and they must hold the
 * script a cloud-init would run: gzip, inflated to a `#!` script whose bytes are the engine's.
 */
import { TerraformOutput } from "cdktf";
import { createHash } from "crypto";
import { gunzipSync } from "zlib";
import { ProvisioningUserData } from "../../constructs/provisioning-user-data";
import { secretParameterNames } from "../../constructs/secret-parameters";
import { SecretVariables } from "../../constructs/secret-variables";
import { bootLogGroup } from "../boot/telemetry-rows";
import {
  appliedUserData,
  bootModulePath,
  engineUserData,
  ReadBackUserData,
  readBackRow,
  userDataToolsMissing,
} from "../boot/user-data";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { exampleStackSettings, synthesize } from "../support/synth";
import { describeWithEngine, EngineWorkspace, tfVars } from "../support/terraform-engine";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(10 * 60_000);

const moto = findMotoServer();
const SETTINGS = exampleStackSettings();
const DATA_VOLUME_ID = "vol-0a1b2c3d4e5f60718";
const ELASTIC_IP = "198.51.100.77";
const LOG_GROUP = bootLogGroup(SETTINGS.stackName, SETTINGS.instanceName);
// Terraform template syntax, shell, SQL and base64's own characters in the values: all must stay data.
const SECRETS = {
  db_root_password: `Root'"$(id)\`x\` %{y} \${var.app_db_password} readback`,
  app_db_password: "App pass'; -- \\ & 100% {} readback",
  source_host_token: "ghp_ReadBack/Token+With=Odd&Chars%41",
};

/** The user data as the boot test had it before: the expression alone, applied by the engine on a local state, no provider. */
async function providerFreeRendering(engine: string): Promise<Buffer> {
  const { json } = synthesize((scope) => {
    const variables = new SecretVariables(scope, "secrets");
    const userData = new ProvisioningUserData(scope, "user_data", {
      settings: SETTINGS.provisioning,
      secrets: variables.scriptSecrets,
      dataVolumeId: DATA_VOLUME_ID,
      elasticIp: ELASTIC_IP,
      logGroupName: LOG_GROUP,
      modulePath: bootModulePath("host-a"),
    });
    new TerraformOutput(scope, "user_data_base64", { value: userData.base64, sensitive: true });
  });
  const workspace = new EngineWorkspace(engine, json);
  try {
    await workspace.init();
    const applied = await workspace.run(
      ["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"],
      tfVars(SECRETS),
      {},
      120_000,
    );
    if (applied.code !== 0) throw new Error(`terraform apply failed:\n${applied.stderr}`);
    return Buffer.from((await workspace.run(["output", "-raw", "user_data_base64"])).stdout, "base64");
  } finally {
    workspace.remove();
  }
}

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

describeWithEngine(
  "the boot test's user data: read back from EC2 (hashicorp/aws against moto) as the engine rendered it",
  (engine) => {
    let server: MotoServer;
    let readBack: ReadBackUserData;
    /** Host B's kind: parameter-store mode, no variable. */
    let parameterStore: ReadBackUserData;
    let providerFree: Buffer;

    beforeAll(async () => {
      server = await MotoServer.start(moto!);
      [readBack, providerFree, parameterStore] = await Promise.all([
        engineUserData(
          { engine, moto: server },
          SETTINGS.provisioning,
          SECRETS,
          DATA_VOLUME_ID,
          ELASTIC_IP,
          LOG_GROUP,
          bootModulePath("host-a"),
        ),
        providerFreeRendering(engine),
        appliedUserData(
          { engine, moto: server },
          (scope) =>
            new ProvisioningUserData(scope, "user_data", {
              settings: { ...SETTINGS.provisioning, secrets: "parameter-store" },
              secrets: { region: "us-east-1", ...secretParameterNames(SETTINGS.stackName) },
              dataVolumeId: DATA_VOLUME_ID,
              modulePath: bootModulePath("host-b"),
            }),
        ),
      ]);
      console.log(`user-data read-back: ${readBackRow("", readBack).join(": ")}`);
    });

    afterAll(async () => {
      await server?.stop();
    }, TEARDOWN_MS);

    it("reads back from EC2 the bytes Terraform rendered: the same apply's output and a provider-free apply's, byte for byte", () => {
      expect(readBack.instanceId).toMatch(/^i-[0-9a-f]{17}$/);
      expect(readBack.bytes.length).toBeGreaterThan(1000);
      expect(sha256(readBack.bytes)).toBe(sha256(readBack.rendered));
      expect(sha256(readBack.bytes)).toBe(sha256(providerFree));
      expect(readBackRow("host A: ", readBack)[2]).toBe(true);
    });

    it("is gzip whose inflated script is the engine's, with the secrets and the instance's values in it: what cloud-init runs", () => {
      // cloud-init inflates gzip user data, and runs what starts with #! as a script, byte for byte.
      expect([...readBack.bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
      const script = gunzipSync(readBack.bytes);
      expect(sha256(script)).toBe(sha256(gunzipSync(providerFree)));
      expect(script.subarray(0, 12).toString()).toBe("#!/bin/bash\n");
      const text = script.toString("utf8");
      for (const value of Object.values(SECRETS)) expect(text).toContain(Buffer.from(value).toString("base64"));
      expect(text).toContain(DATA_VOLUME_ID);
      expect(text).toContain(ELASTIC_IP);
      expect(text).toContain(LOG_GROUP);
    });

    it("reads back the parameter-store mode's user data (host B's kind) from another instance, as rendered, naming the parameters", () => {
      expect(parameterStore.instanceId).not.toBe(readBack.instanceId);
      expect(readBackRow("host B: ", parameterStore)[2]).toBe(true);
      const text = gunzipSync(parameterStore.bytes).toString("utf8");
      expect(text.startsWith("#!/bin/bash\n")).toBe(true);
      expect(text).toContain(secretParameterNames(SETTINGS.stackName).appDbPassword);
      for (const value of Object.values(SECRETS)) expect(text).not.toContain(Buffer.from(value).toString("base64"));
    });
  },
  [...(moto ? [] : ["moto_server"]), ...userDataToolsMissing()],
);
