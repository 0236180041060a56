/**
 * EC2 takes at most 16 KiB of user data, the compressed bytes of gzip user data. ProvisioningUserData
 * refuses at synthesis a script whose user data could go over, measuring the script with Node.js's
 * zlib plus TERRAFORM_GZIP_MARGIN for Terraform's own deflate, and the secrets at their longest. Here
 * a real engine compresses the scripts of the stack's kinds, and builds their user data with the
 * longest secrets there are (256 characters of four UTF-8 bytes each): the margin covers Terraform's
 * gzip, and no user data goes over the construct's bound, or over EC2's limit.
 */
import { Fn, TerraformOutput, TerraformVariable } from "cdktf";
import { writeFileSync } from "fs";
import { join } from "path";
import { gzipSize, ProvisioningUserData, TERRAFORM_GZIP_MARGIN, USER_DATA_LIMIT_BYTES } from "../../constructs/provisioning-user-data";
import { secretParameterNames } from "../../constructs/secret-parameters";
import { MAX_SECRET_LENGTH } from "../../constructs/constants";
import { SecretVariables } from "../../constructs/secret-variables";
import { renderProvisioningScript } from "../../userdata";
import { ProvisioningSettings } from "../../settings/provisioning-settings";
import { exampleStackSettings, synthesize } from "../support/synth";
import { describeWithEngine, EngineWorkspace, tfVars } from "../support/terraform-engine";

const example = exampleStackSettings().provisioning;
const KINDS: Record<string, ProvisioningSettings> = {
  "the example (the spec's)": example,
  "the example with a domain (the HTTPS module)": exampleStackSettings({ domain: { hostedZone: "example.com", name: "crm.example.com" } }).provisioning,
  "settings at their longest": exampleStackSettings({
    appName: `a${"b-_.".repeat(16)}`.slice(0, 64), databaseName: "crm_data".repeat(4),
    gitUser: "Jérôme O'Brien \"Deploy\" $(id) `x` ; & | 🔑 ".repeat(3).slice(0, 99) + "Z",
    repoUrl: `https://${"a".repeat(63)}.${"b".repeat(63)}.example.com:65535/${"org-name/".repeat(12)}app.git`,
  }).provisioning,
};
/** The longest secret a variable takes, in the widest characters: 256 characters of 4 UTF-8 bytes. */
const LONGEST = "😀".repeat(MAX_SECRET_LENGTH);
const MARKERS = { dbRootPasswordBase64: "A", appDbPasswordBase64: "B", sourceHostTokenBase64: "C" };

/** Bytes that a base64 text of `length` characters (with its padding) decodes to, at most. */
const decodedBytes = (length: number) => (length / 4) * 3;

describeWithEngine("user data sizes, with the engine's own gzip", (engine) => {
  it.each(Object.entries(KINDS))("%s: within the margin, the construct's bound and EC2's limit", async (_kind, settings) => {
    let bound = 0;
    const { json } = synthesize((scope) => {
      const secrets = new SecretVariables(scope, "secrets");
      const userData = new ProvisioningUserData(scope, "user_data", {
        settings, secrets: secrets.scriptSecrets, dataVolumeId: "vol-0123456789abcdef0", elasticIp: "203.0.113.25",
      });
      bound = userData.maxCompressedBytes;
      new TerraformOutput(scope, "user_data_length", { value: Fn.lengthOf(userData.base64), sensitive: true });
      new TerraformOutput(scope, "script_gzip_length", { value: Fn.lengthOf(Fn.base64gzip(Fn.file("script.txt"))) });
    });
    const workspace = new EngineWorkspace(engine, json);
    try {
      // The script as the construct measures it: its secrets one character each.
      const script = renderProvisioningScript(settings, MARKERS, "vol-0123456789abcdef0", "203.0.113.25");
      writeFileSync(join(workspace.dir, "script.txt"), script);
      await workspace.init();
      const applied = await workspace.run(["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"],
        tfVars({ db_root_password: LONGEST, app_db_password: LONGEST, source_host_token: LONGEST }));
      expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: "" });
      const output = async (name: string) => Number((await workspace.run(["output", "-raw", name])).stdout);
      const terraformGzip = decodedBytes(await output("script_gzip_length"));
      expect(terraformGzip).toBeLessThanOrEqual(Math.ceil(gzipSize(script) * TERRAFORM_GZIP_MARGIN));
      const userData = decodedBytes(await output("user_data_length"));
      expect(userData).toBeLessThanOrEqual(bound);
      expect(bound).toBeLessThanOrEqual(USER_DATA_LIMIT_BYTES);
    } finally {
      workspace.remove();
    }
  }, 120_000);

  it("the scale-out topology with a domain and the longest settings: its values at their longest, within the bound and EC2's limit", async () => {
    const settings = exampleStackSettings({
      topology: "scale-out", secrets: "parameter-store", domain: { hostedZone: "example.com", name: "crm.example.com" },
      appName: `a${"b-_.".repeat(16)}`.slice(0, 64), databaseName: "crm_data".repeat(4),
      repoUrl: `https://${"a".repeat(63)}.${"b".repeat(63)}.example.com:65535/${"org-name/".repeat(12)}app.git`,
    }).provisioning;
    const { appDbPassword, sourceHostToken } = secretParameterNames("S".repeat(64));
    // What AWS writes at its longest: RDS's endpoint (a 63-character identifier), the secret RDS names, a load balancer's name; a 200-character ref.
    const values = {
      database_host: `${"d".repeat(63)}.c0123456789a.ap-southeast-5.rds.amazonaws.com`,
      master_secret_arn: `arn:aws-us-gov:secretsmanager:ap-southeast-5:123456789012:secret:rds!db-${"0123abcd-".repeat(4)}0123-AbCdEf`,
      load_balancer_name: `${"l".repeat(32)}-1234567890.ap-southeast-5.elb.amazonaws.com`, release_ref: `r${"e/".repeat(99)}f`,
    };
    let bound = 0;
    const { json } = synthesize((scope) => {
      const variable = (name: string) => new TerraformVariable(scope, name, { type: "string" }).stringValue;
      const userData = new ProvisioningUserData(scope, "user_data", {
        settings, secrets: { region: "ap-southeast-5", appDbPassword, sourceHostToken },
        scaleOut: { databaseHost: variable("database_host"), databasePort: "65535", masterSecretArn: variable("master_secret_arn"),
          loadBalancerName: variable("load_balancer_name"), releaseRef: variable("release_ref") },
      });
      bound = userData.maxCompressedBytes;
      new TerraformOutput(scope, "user_data_length", { value: Fn.lengthOf(userData.base64) });
    });
    const workspace = new EngineWorkspace(engine, json);
    try {
      await workspace.init();
      const applied = await workspace.run(["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"], tfVars(values));
      expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: "" });
      const userData = decodedBytes(Number((await workspace.run(["output", "-raw", "user_data_length"])).stdout));
      expect(userData).toBeLessThanOrEqual(bound);
      expect(bound).toBeLessThanOrEqual(USER_DATA_LIMIT_BYTES);
    } finally {
      workspace.remove();
    }
  }, 120_000);
});
