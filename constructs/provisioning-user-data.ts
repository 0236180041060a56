import { Fn, TerraformLocal } from "cdktf";
import { Construct } from "constructs";
import { gzipSync } from "zlib";
import { defaultModulePath, renderProvisioningScript, ScaleOutValues, SecretsInput } from "../userdata";
import { ProvisioningSettings, ScriptSecrets } from "../settings/provisioning-settings";
import { nameElements } from "./addresses";
import { MAX_SECRET_LENGTH } from "./constants";

/** Stand for the data volume's id and the Elastic IP while the script is rendered: the longest there are. */
const VOLUME_PLACEHOLDER = "vol-0ca7a1c0ffee00000";
const ELASTIC_IP_PLACEHOLDER = "255.255.255.255";

/** Stands for a value of the scale-out topology while the script is rendered: unique, at least as long as any value. */
function standIn(what: string, length: number): string {
  return `crm${what}placeholder`.padEnd(length, "0");
}

/**
 * What stands for each of the scale-out topology's values: longer than any real one (an RDS endpoint,
 * a load balancer's DNS name; release_ref at most as long as its rule allows),
 * in the form the script's header accepts.
 */
const SCALE_OUT_PLACEHOLDERS: ScaleOutValues = {
  databaseHost: standIn("databasehost", 128),
  // Never stands in: the port is given as a number (a digit placeholder could be found in a setting, a URL's port).
  databasePort: "65535",
  loadBalancerName: standIn("loadbalancer", 128),
  releaseRef: standIn("releaseref", 200),
};

/** EC2 refuses user data above 16 KiB (before base64; of gzip-compressed user data, the compressed bytes). */
export const USER_DATA_LIMIT_BYTES = 16 * 1024;

/**
 * How much more Terraform's `base64gzip` (Go's deflate) may write than Node.js's zlib, which
 * measures the script at synthesis: a margin above what the two were seen to differ by (docs/testing.md);
 * __tests__/engine/user-data-size.test.ts has the engine compress the scripts and fails when it writes
 * more than this allows.
 */
export const TERRAFORM_GZIP_MARGIN = 1.01;

/** Gzip of the script, as Node.js measures it at synthesis (Terraform's may be up to TERRAFORM_GZIP_MARGIN more). */
export function gzipSize(script: string): number {
  return gzipSync(script).length;
}

/**
 * The script would not fit EC2's user-data limit: the settings' values are too long together. main.ts
 * prints its one line, without a stack trace, as it does a settings problem.
 */
export class UserDataTooLarge extends Error {
  constructor(bytes: number) {
    super(
      `The compressed provisioning script can reach ${bytes} bytes, over EC2's user-data limit of ${USER_DATA_LIMIT_BYTES}: ` +
        "shorten the longest settings (paths, repoUrl, gitUser, names).",
    );
    this.name = "UserDataTooLarge";
  }
}

/** Props of {@link ProvisioningUserData}. */
export interface ProvisioningUserDataProps {
  /** Public settings of the script (docs/original-stack.md §3). Validate them first: they are rendered as given. */
  readonly settings: ProvisioningSettings;
  /**
   * In `user-data` mode, Terraform expressions that evaluate to the base64 text of each secret, for
   * example `SecretVariables.scriptSecrets`: they are inserted into the script as expressions, so
   * Terraform fills them in at plan time and the synthesized JSON never holds a secret. In
   * `parameter-store` mode, the names of the parameters the script reads at boot
   * (`SecretParameters.names`): then the user data holds no secret at all.
   */
  readonly secrets: SecretsInput;
  /**
   * Id of the EBS volume that holds the database (a Terraform expression such as
   * `DataVolume.volumeId`): the script finds the disk by it and mounts it before the database starts.
   * @default - none: the database stays on the root disk
   */
  readonly dataVolumeId?: string;
  /**
   * The host's Elastic IP (a Terraform expression such as `ElasticIp.publicIp`): the first boot waits
   * until the metadata service reports it before it reads the public hostname for FRONTENDURI.
   * @default - none: the hostname is read at once
   */
  readonly elasticIp?: string;
  /**
   * The scale-out topology's values (Terraform expressions, or the values themselves): the database's endpoint
   * and master secret, the load balancer's DNS name and the release the hosts deploy; the database's port a
   * number. Required with `"topology": "scale-out"`.
   * @default - none (the single host)
   */
  readonly scaleOut?: ScaleOutValues;
  /**
   * The CloudWatch Logs log group the hosts ship their logs to (HostLogGroup; settings/host-metrics.ts, hostLogGroupName).
   * @default - none: the hosts publish their metrics, and ship no logs
   */
  readonly logGroupName?: string;
  /**
   * Where the first boot's modules are in Parameter Store (`<modulePath>/<module>`): HostModules puts them there
   * (give it the same `settings`), the user data reads them. Two stacks in one account and Region need two.
   * @default - `/<appName>/modules` (defaultModulePath); the topologies give `/<stackName>/crm/modules` (moduleParameterPath)
   */
  readonly modulePath?: string;
  /**
   * Longest secret, in single-byte characters, that always fits: the script must leave room for three
   * such secrets at synthesis. Longer ones in multi-byte characters are checked at plan against
   * `secretBudgetBytes` (SecretVariables.limitEncodedLength).
   * @default MAX_SECRET_LENGTH (256)
   */
  readonly maxSecretLength?: number;
  /**
   * Terraform name of the local value that holds the script (`local.<name>`).
   * @default "provisioning_script"
   */
  readonly name?: string;
}

/**
 * The first-boot provisioning script, rendered by `userdata/` and held in a Terraform local
 * value so that Terraform itself inserts the secrets. Everything else in the script is
 * literal text, escaped so Terraform's template syntax (`${`, `%{`) never reads shell code.
 */
export class ProvisioningUserData extends Construct {
  /** The script text (a Terraform expression: it holds the secrets once evaluated). */
  public readonly script: string;
  /**
   * The script, gzip-compressed and base64-encoded, for `user_data_base64`. cloud-init inflates
   * gzip user data before it runs it; EC2's 16 KiB limit then counts the compressed bytes, which
   * leaves the script room to grow (uncompressed, it came near the limit: docs/provisioning.md).
   */
  public readonly base64: string;
  /** Upper bound of the compressed user data's size, for any secrets within `secretBudgetBytes`. */
  public readonly maxCompressedBytes: number;
  /**
   * In `user-data` mode, the bytes the three secrets' base64 texts may take together: what EC2's limit
   * leaves once the script is counted. Hand it to SecretVariables.limitEncodedLength, which checks it at plan.
   * Undefined in `parameter-store` mode, where the user data holds no secret.
   */
  public readonly secretBudgetBytes?: number;
  /**
   * What the user data takes at most of EC2's limit, as this construct's check counts it: the compressed script
   * with the margin for Terraform's gzip, and in `user-data` mode three secrets of the longest accepted length.
   */
  public readonly checkedBytes: number;
  /** The settings the script was rendered from, and where it reads its modules (HostModules's `settings` and `path`). */
  public readonly settings: ProvisioningSettings;
  public readonly modulePath: string;

  constructor(scope: Construct, id: string, props: ProvisioningUserDataProps) {
    super(scope, id);
    const inUserData = !("region" in props.secrets);
    const marker = inUserData
      ? { dbRootPasswordBase64: "A", appDbPasswordBase64: "B", sourceHostTokenBase64: "C" }
      : props.secrets;
    // Conservative: the script with the margin measured between Terraform's (Go's) deflate and Node.js's
    // zlib; the secrets (base64 of any bytes) counted as incompressible.
    const scriptBytes = Math.ceil(
      gzipSize(renderProvisioningScript(props.settings, marker, ...placeholders(props))) * TERRAFORM_GZIP_MARGIN,
    );
    if (inUserData) {
      // Three secrets of the longest accepted length in single-byte characters must always fit.
      const needed = 3 * Math.ceil((props.maxSecretLength ?? MAX_SECRET_LENGTH) / 3) * 4;
      this.checkedBytes = scriptBytes + needed;
      if (this.checkedBytes > USER_DATA_LIMIT_BYTES) throw new UserDataTooLarge(this.checkedBytes);
      this.secretBudgetBytes = USER_DATA_LIMIT_BYTES - scriptBytes;
      this.maxCompressedBytes = USER_DATA_LIMIT_BYTES;
    } else {
      this.checkedBytes = scriptBytes;
      if (scriptBytes > USER_DATA_LIMIT_BYTES) throw new UserDataTooLarge(scriptBytes);
      this.maxCompressedBytes = scriptBytes;
    }
    this.settings = props.settings;
    this.modulePath = props.modulePath ?? defaultModulePath(props.settings);
    const local = new TerraformLocal(this, "script", terraformTemplate(props.settings, props.secrets, props));
    nameElements(props.name ?? "provisioning_script", local);
    this.script = local.asString;
    this.base64 = Fn.base64gzip(local.asString);
  }
}

/** The Terraform expressions the script holds besides the secrets. */
export interface ScriptExpressions {
  /** The data volume's id (`vol-…` once evaluated). @default - none */
  readonly dataVolumeId?: string;
  /** The host's Elastic IP. @default - none */
  readonly elasticIp?: string;
  /** The scale-out topology's values. @default - none */
  readonly scaleOut?: ScaleOutValues;
  /** The hosts' log group: a name, not an expression. @default - none */
  readonly logGroupName?: string;
  /** Where the modules' parameters are: a name, not an expression. @default - defaultModulePath */
  readonly modulePath?: string;
}

/**
 * Renders the script with placeholders in place of the secrets and the other expressions, escapes
 * the template syntax of the whole literal text, then puts the expressions where the placeholders were.
 */
export function terraformTemplate(
  settings: ProvisioningSettings,
  secrets: SecretsInput,
  expressions: ScriptExpressions = {},
): string {
  if ("region" in secrets)
    return withExpressions(
      escapeTemplateSyntax(renderProvisioningScript(settings, secrets, ...placeholders(expressions))),
      expressions,
    );
  const keys = Object.keys(secrets) as (keyof ScriptSecrets)[];
  // Placeholders use only letters, digits, _ and -, which no escaping touches.
  const placeholder = (key: string) => `CRMSECRETPLACEHOLDER_${key}_END`;
  const secretPlaceholders = Object.fromEntries(keys.map((key) => [key, placeholder(key)])) as unknown as ScriptSecrets;
  let text = withExpressions(
    escapeTemplateSyntax(renderProvisioningScript(settings, secretPlaceholders, ...placeholders(expressions))),
    expressions,
  );
  for (const key of keys) {
    const parts = text.split(placeholder(key));
    if (parts.length !== 2) {
      throw new Error(
        `The provisioning script must hold the secret ${key} exactly once; found it ${parts.length - 1} times.`,
      );
    }
    text = parts.join(secrets[key]);
  }
  return text;
}

/** Whether a value is a Terraform expression (a token), which a placeholder stands for while the script is rendered. */
const isExpression = (value: string) => value.includes("${");

/**
 * What stands for the expressions while the script is rendered ("" and undefined where there are none); a
 * scale-out value that is not an expression (such as the database's port) is rendered as it is.
 */
function placeholders(
  expressions: ScriptExpressions,
): [string, string, ScaleOutValues | undefined, string, string | undefined] {
  const scaleOut = expressions.scaleOut;
  if (scaleOut && isExpression(scaleOut.databasePort)) {
    throw new Error(
      `The database's port must be a number, not the expression ${scaleOut.databasePort} (the stack sets it: DATABASE_PORT).`,
    );
  }
  return [
    expressions.dataVolumeId === undefined ? "" : VOLUME_PLACEHOLDER,
    expressions.elasticIp === undefined ? "" : ELASTIC_IP_PLACEHOLDER,
    scaleOut === undefined
      ? undefined
      : (Object.fromEntries(
          Object.entries(SCALE_OUT_PLACEHOLDERS).map(([key, stand]) => [
            key,
            isExpression(scaleOut[key as keyof ScaleOutValues]) ? stand : scaleOut[key as keyof ScaleOutValues],
          ]),
        ) as unknown as ScaleOutValues),
    expressions.logGroupName ?? "",
    expressions.modulePath,
  ];
}

/**
 * The escaped script with the expressions where their placeholders were: each once, but the load balancer's
 * name, which both URIs hold (and none does when a domain names the site).
 */
function withExpressions(text: string, expressions: ScriptExpressions): string {
  const scaleOut = expressions.scaleOut;
  const replaced: [string, string | undefined, string, (count: number) => boolean][] = [
    ["data volume id", expressions.dataVolumeId, VOLUME_PLACEHOLDER, (count) => count === 1],
    ["Elastic IP", expressions.elasticIp, ELASTIC_IP_PLACEHOLDER, (count) => count === 1],
    ...(Object.keys(SCALE_OUT_PLACEHOLDERS) as (keyof ScaleOutValues)[]).map(
      (key): [string, string | undefined, string, (count: number) => boolean] => [
        key,
        scaleOut && isExpression(scaleOut[key]) ? scaleOut[key] : undefined,
        SCALE_OUT_PLACEHOLDERS[key],
        (count) => (key === "loadBalancerName" ? count <= 2 : count === 1),
      ],
    ),
  ];
  for (const [what, value, stand, expected] of replaced) {
    if (value === undefined) continue;
    const parts = text.split(stand);
    if (!expected(parts.length - 1))
      throw new Error(`The provisioning script must hold the ${what} once; found it ${parts.length - 1} times.`);
    text = parts.join(value);
  }
  return text;
}

/** Escapes Terraform template syntax so that `${…}` and `%{…}` stay literal text. */
export function escapeTemplateSyntax(text: string): string {
  // Replacement functions, not strings: in a replacement string "$$" would collapse to "$".
  return text.replace(/\$\{/g, () => "$${").replace(/%\{/g, () => "%%{");
}
