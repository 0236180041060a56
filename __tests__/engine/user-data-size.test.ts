/**
 * EC2 takes at most 16 KiB of user data, the compressed bytes of gzip user data. ProvisioningUserData
 * refuses at synthesis a script that leaves no room for three 256-character ASCII secrets, measuring the
 * script with Node.js's zlib plus TERRAFORM_GZIP_MARGIN for Terraform's own deflate; what room is left
 * (secretBudgetBytes) SecretVariables checks at plan. Here a real engine compresses the scripts of the
 * stack's kinds and builds their user data with secrets that fill that room exactly, in the widest
 * characters there are: the margin covers Terraform's gzip, and no user data goes over EC2's limit; one
 * byte more and the plan fails with the check's message.
 */
import { Fn, TerraformOutput, TerraformVariable } from "cdktf";
import { writeFileSync } from "fs";
import { join } from "path";
import {
  gzipSize,
  ProvisioningUserData,
  TERRAFORM_GZIP_MARGIN,
  USER_DATA_LIMIT_BYTES,
} from "../../constructs/provisioning-user-data";
import { secretParameterNames } from "../../constructs/secret-parameters";
import { MAX_SECRET_LENGTH } from "../../constructs/constants";
import { SecretVariables } from "../../constructs/secret-variables";
import { renderProvisioningScript } from "../../userdata";
import { ProvisioningSettings } from "../../settings/provisioning-settings";
import { exampleStackSettings, synthesize } from "../support/synth";
import { describeWithEngine, EngineWorkspace, flatten, tfVars } from "../support/terraform-engine";

const example = exampleStackSettings().provisioning;
const KINDS: Record<string, ProvisioningSettings> = {
  "the example (the original stack's)": example,
  "the example with a domain (the HTTPS module)": exampleStackSettings({
    domain: { hostedZone: "example.com", name: "crm.example.com" },
  }).provisioning,
  "settings at their longest": exampleStackSettings({
    appName: `a${"b-_.".repeat(16)}`.slice(0, 64),
    databaseName: "crm_data".repeat(4),
    gitUser: 'Jérôme O\'Brien "Deploy" $(id) `x` ; & | 🔑 '.repeat(3).slice(0, 99) + "Z",
    repoUrl: `https://${"a".repeat(63)}.${"b".repeat(63)}.example.com:65535/${"org-name/".repeat(12)}app.git`,
  }).provisioning,
};
/** A secret of `bytes` UTF-8 bytes, in the widest characters (4 bytes each) and ASCII for the rest. */
const secretOf = (bytes: number) => "😀".repeat(Math.floor(bytes / 4)) + "x".repeat(bytes % 4);
/** Three secrets whose base64 texts take `budget` bytes together, or at most 3 bytes less where base64's groups of 4 do not allow it. */
function secretsFilling(budget: number): Record<string, string> {
  // base64 of n bytes is 4 * ceil(n / 3) long: three secrets of 3k bytes each give 12k.
  const groups = Math.floor(budget / 4);
  const per = [Math.ceil(groups / 3), Math.ceil((groups - 1) / 3), Math.floor(groups / 3)];
  expect(per.reduce((a, b) => a + b)).toBe(groups);
  const [root, app, token] = per.map((count) => secretOf(3 * count));
  return { db_root_password: root, app_db_password: app, source_host_token: token };
}
const MARKERS = { dbRootPasswordBase64: "A", appDbPasswordBase64: "B", sourceHostTokenBase64: "C" };

/** Bytes that a base64 text of `length` characters (with its padding) decodes to, at most. */
const decodedBytes = (length: number) => (length / 4) * 3;

describeWithEngine("user data sizes, with the engine's own gzip", (engine) => {
  it.each(Object.entries(KINDS))(
    "%s: within the margin and EC2's limit with secrets that fill the room the script leaves, refused one base64 group past it",
    async (_kind, settings) => {
      let budget = 0;
      const { json } = synthesize((scope) => {
        // Longer secrets than the variables take (MAX_SECRET_LENGTH), so that the room is what binds (1000: RE2's longest repeat).
        const secrets = new SecretVariables(scope, "secrets", { maxLength: 1000 });
        const userData = new ProvisioningUserData(scope, "user_data", {
          settings,
          secrets: secrets.scriptSecrets,
          dataVolumeId: "vol-0123456789abcdef0",
          elasticIp: "203.0.113.25",
        });
        budget = userData.secretBudgetBytes!;
        secrets.limitEncodedLength(budget);
        new TerraformOutput(scope, "user_data_length", { value: Fn.lengthOf(userData.base64), sensitive: true });
        new TerraformOutput(scope, "script_gzip_length", { value: Fn.lengthOf(Fn.base64gzip(Fn.file("script.txt"))) });
      });
      expect(budget).toBeGreaterThanOrEqual(3 * Math.ceil(MAX_SECRET_LENGTH / 3) * 4);
      const workspace = new EngineWorkspace(engine, json);
      try {
        // The script as the construct measures it: its secrets one character each.
        const script = renderProvisioningScript(settings, MARKERS, "vol-0123456789abcdef0", "203.0.113.25");
        writeFileSync(join(workspace.dir, "script.txt"), script);
        await workspace.init();
        const secrets = secretsFilling(budget);
        const applied = await workspace.run(
          ["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"],
          tfVars(secrets),
        );
        expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: "" });
        const output = async (name: string) => Number((await workspace.run(["output", "-raw", name])).stdout);
        const terraformGzip = decodedBytes(await output("script_gzip_length"));
        expect(terraformGzip).toBeLessThanOrEqual(Math.ceil(gzipSize(script) * TERRAFORM_GZIP_MARGIN));
        const userData = decodedBytes(await output("user_data_length"));
        expect(userData).toBeLessThanOrEqual(USER_DATA_LIMIT_BYTES);
        // Past the room by one group of base64 (three bytes of secret): the plan stops, naming no secret.
        const over = await workspace.plan({ ...secrets, source_host_token: secrets.source_host_token + "xyz" });
        expect(over.code).toBe(1);
        expect(flatten(over.stderr)).toContain(
          `db_root_password, app_db_password and source_host_token take more than ${budget} bytes together in base64`,
        );
        expect(over.stderr).not.toContain("😀");
      } finally {
        workspace.remove();
      }
    },
    120_000,
  );

  it("the scale-out topology with a domain and the longest settings: its values at their longest, within the bound and EC2's limit", async () => {
    const settings = exampleStackSettings({
      topology: "scale-out",
      secrets: "parameter-store",
      domain: { hostedZone: "example.com", name: "crm.example.com" },
      appName: `a${"b-_.".repeat(16)}`.slice(0, 64),
      databaseName: "crm_data".repeat(4),
      repoUrl: `https://${"a".repeat(63)}.${"b".repeat(63)}.example.com:65535/${"org-name/".repeat(12)}app.git`,
    }).provisioning;
    const { appDbPassword, sourceHostToken } = secretParameterNames("S".repeat(64));
    // What AWS writes at its longest: RDS's endpoint (a 63-character identifier), the secret RDS names, a load balancer's name; a 200-character ref.
    const values = {
      database_host: `${"d".repeat(63)}.c0123456789a.ap-southeast-5.rds.amazonaws.com`,
      load_balancer_name: `${"l".repeat(32)}-1234567890.ap-southeast-5.elb.amazonaws.com`,
      release_ref: `r${"e/".repeat(99)}f`,
    };
    let bound = 0;
    const { json } = synthesize((scope) => {
      const variable = (name: string) => new TerraformVariable(scope, name, { type: "string" }).stringValue;
      const userData = new ProvisioningUserData(scope, "user_data", {
        settings,
        secrets: { region: "ap-southeast-5", appDbPassword, sourceHostToken },
        scaleOut: {
          databaseHost: variable("database_host"),
          databasePort: "65535",
          loadBalancerName: variable("load_balancer_name"),
          releaseRef: variable("release_ref"),
        },
      });
      bound = userData.maxCompressedBytes;
      new TerraformOutput(scope, "user_data_length", { value: Fn.lengthOf(userData.base64) });
    });
    const workspace = new EngineWorkspace(engine, json);
    try {
      await workspace.init();
      const applied = await workspace.run(
        ["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"],
        tfVars(values),
      );
      expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: "" });
      const userData = decodedBytes(Number((await workspace.run(["output", "-raw", "user_data_length"])).stdout));
      expect(userData).toBeLessThanOrEqual(bound);
      expect(bound).toBeLessThanOrEqual(USER_DATA_LIMIT_BYTES);
    } finally {
      workspace.remove();
    }
  }, 120_000);
});
