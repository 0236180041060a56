/**
 * Values the settings refuse because AWS or the host could never use them: each refusal
 * names the setting and what is expected; the legitimate neighbour of each is accepted.
 */
import { parseStackSettings } from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";
import { settingsErrorOf } from "../support/synth";

const domain = { hostedZone: "example.com", name: "crm.example.com" };
const scaleOut = { ...exampleSettings, topology: "scale-out", secrets: "parameter-store" };

describe("the domain on the scale-out topology: ACM's first name of a certificate is at most 64 octets", () => {
  const longName = `${"a".repeat(52)}.example.com`; // 64 characters
  it("takes 64 characters, refuses 65 with scale-out, and leaves the single host (Caddy) alone", () => {
    expect(longName).toHaveLength(64);
    expect(parseStackSettings({ ...scaleOut, domain: { ...domain, name: longName } }).provisioning.domain?.name).toBe(
      longName,
    );
    expect(settingsErrorOf({ ...scaleOut, domain: { ...domain, name: `b${longName}` } })).toBe(
      `Invalid setting "domain.name" (got "b${longName}"): expected a name of at most 64 characters with "topology": "scale-out" ` +
        "(ACM takes no longer name as a certificate's first name, and the load balancer's certificate is ACM's).",
    );
    expect(
      parseStackSettings({ ...exampleSettings, domain: { ...domain, name: `b${longName}` } }).provisioning.domain?.name,
    ).toBe(`b${longName}`);
  });
});

describe("acmeDirectory and caddyUrl: a port from 1 to 65535, a host of DNS's limits", () => {
  it.each([
    ["acmeDirectory", "https://acme.example.com:0/directory"],
    ["acmeDirectory", "https://acme.example.com:65536/directory"],
  ])("refuses %s = %s, naming the setting", (key, url) => {
    expect(settingsErrorOf({ ...exampleSettings, domain: { ...domain, [key]: url } })).toMatch(
      new RegExp(
        `^Invalid setting "domain\\.${key}" \\(got .+\\): expected an https URL .* an optional port from 1 to 65535\\)\\.$`,
      ),
    );
  });
  it.each([["https://mirror.example.com:99999/caddy.tar.gz"], [`https://${"a".repeat(64)}.example.com/caddy.tar.gz`]])(
    "refuses caddyUrl = %s, naming the setting",
    (url) => {
      expect(settingsErrorOf({ ...exampleSettings, caddyUrl: url })).toMatch(
        /^Invalid setting "caddyUrl" \(got .+\): expected an https URL .* an optional port from 1 to 65535\)\.$/,
      );
    },
  );
  it("takes ports 1 and 65535", () => {
    const ok = { ...domain, acmeDirectory: "https://acme.example.com:65535/directory" };
    expect(parseStackSettings({ ...exampleSettings, domain: ok }).provisioning.domain).toMatchObject(ok);
    expect(
      parseStackSettings({ ...exampleSettings, caddyUrl: "https://mirror.example.com:1/caddy.tar.gz" }).provisioning
        .caddyUrl,
    ).toBe("https://mirror.example.com:1/caddy.tar.gz");
  });
});

describe("alarmEmail: a domain within DNS's limits (labels of 63, names of 253)", () => {
  const label63 = "a".repeat(63);
  it("takes a 63-character label and a 253-character domain, refuses a 64-character label or a 254-character domain", () => {
    const domain253 = `${label63}.${label63}.${label63}.${"b".repeat(61)}`;
    expect(domain253).toHaveLength(253);
    expect(parseStackSettings({ ...exampleSettings, alarmEmail: `ops@${label63}.com` }).alarmEmail).toBe(
      `ops@${label63}.com`,
    );
    expect(parseStackSettings({ ...exampleSettings, alarmEmail: `ops@${domain253}` }).alarmEmail).toBe(
      `ops@${domain253}`,
    );
    for (const bad of [
      `ops@${label63}a.com`,
      `ops@${domain253}c`,
      `ops@${label63}.${label63}.${label63}.${label63}.com`,
    ]) {
      expect(settingsErrorOf({ ...exampleSettings, alarmEmail: bad })).toMatch(
        /^Invalid setting "alarmEmail" \(got .+\): expected an e-mail address such as /,
      );
      expect(settingsErrorOf({ ...exampleSettings, alarmEmail: bad })).toContain(
        "ops@example.com, whose domain has labels of 1 to 63 letters, digits or - and at most 253 characters.",
      );
    }
  });
});

describe("Parameter Store mode: parameter names and the key", () => {
  it.each(["awsCrm", "AWS-crm", "ssmStack", "SsM1"])(
    "refuses the stack name %s with parameter-store (SSM refuses /aws…, /ssm…)",
    (stackName) => {
      expect(settingsErrorOf({ ...exampleSettings, stackName, secrets: "parameter-store" })).toBe(
        `Invalid setting "stackName" (got "${stackName}"): expected a stack name not starting with aws or ssm (in any case) with "secrets": ` +
          '"parameter-store" (the secrets are the parameters /<stackName>/crm/…, and Parameter Store refuses a name starting with either).',
      );
    },
  );
  it("takes such a stack name with the secrets in the user data, and a name merely holding aws", () => {
    expect(parseStackSettings({ ...exampleSettings, stackName: "awsCrm" }).stackName).toBe("awsCrm");
    expect(parseStackSettings({ ...exampleSettings, stackName: "CrmAws", secrets: "parameter-store" }).stackName).toBe(
      "CrmAws",
    );
  });

  it.each(["alias/aws/s3", "alias/aws/ebs", "arn:aws:kms:us-east-1:123456789012:alias/aws/secretsmanager"])(
    "refuses another service's AWS managed key %s",
    (secretsKmsKeyId) => {
      expect(settingsErrorOf({ ...exampleSettings, secrets: "parameter-store", secretsKmsKeyId })).toMatch(
        new RegExp(
          `^Invalid setting "secretsKmsKeyId" \\(got "${secretsKmsKeyId}"\\): expected alias/aws/ssm or a customer managed key \\(alias/aws/[a-z0-9]+ is another service's AWS managed key`,
        ),
      );
    },
  );

  it.each([
    "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    "arn:aws-cn:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    "arn:aws:kms:us-west-2:123456789012:alias/crm-secrets",
  ])("refuses a key ARN of another region or partition than the stack's: %s", (secretsKmsKeyId) => {
    expect(settingsErrorOf({ ...exampleSettings, secrets: "parameter-store", secretsKmsKeyId })).toBe(
      `Invalid setting "secretsKmsKeyId" (got "${secretsKmsKeyId}"): expected a KMS key in the stack's region, us-east-1 (an ARN starting ` +
        "arn:aws:kms:us-east-1:): Parameter Store encrypts only with a key of its own region.",
    );
  });

  it("takes alias/aws/ssm, a customer alias, a key id and a key ARN of the stack's region", () => {
    for (const secretsKmsKeyId of [
      "alias/aws/ssm",
      "alias/crm-secrets",
      "alias/awsome",
      "1234abcd-12ab-34cd-56ef-1234567890ab",
      "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
      "arn:aws:kms:us-east-1:123456789012:alias/aws/ssm",
    ]) {
      expect(
        parseStackSettings({ ...exampleSettings, secrets: "parameter-store", secretsKmsKeyId }).secretsKmsKeyId,
      ).toBe(secretsKmsKeyId);
    }
  });
});
