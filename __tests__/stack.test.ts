import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { Testing } from "cdktf";
import { CrmHostStack } from "../main";
import { BOOTSTRAP_VERSION_MESSAGE } from "../constructs/bootstrap-version-check";
import { exampleStackSettings, only, TerraformJson } from "./support/synth";

function synthStack(changes: Record<string, unknown> = {}): { text: string; json: TerraformJson } {
  const stack = new CrmHostStack(Testing.app(), exampleStackSettings(changes));
  const text = Testing.synth(stack);
  return { text, json: JSON.parse(text) };
}

/** `${type.name.attribute}` of the only resource of a type. */
function reference(json: TerraformJson, type: string, attribute: string): string {
  const names = Object.keys(json.resource?.[type] ?? {});
  if (names.length !== 1) throw new Error(`expected one ${type}, found ${names.length}`);
  return `\${${type}.${names[0]}.${attribute}}`;
}

/** Name of the data source that reads the image parameter. */
function imageDataSource(json: TerraformJson): string {
  const names = Object.entries(json.data?.aws_ssm_parameter ?? {})
    .filter(([, source]) => source.name === "${var.image_parameter}")
    .map(([name]) => name);
  if (names.length !== 1) throw new Error(`expected one image data source, found ${names.length}`);
  return names[0];
}

describe("CrmHostStack", () => {
  const { text, json } = synthStack();
  const resources = json.resource ?? {};

  it("holds exactly the spec's resources, plus the bootstrap and secret checks", () => {
    expect(Object.keys(resources).sort()).toEqual([
      "aws_iam_instance_profile", "aws_iam_role", "aws_instance", "aws_key_pair", "aws_security_group", "terraform_data",
    ]);
    for (const type of Object.keys(resources)) {
      expect([type, Object.keys(resources[type]).length]).toEqual([type, type === "terraform_data" ? 2 : 1]);
    }
    expect(text).toHaveProviderWithProperties(AwsProvider, { region: "us-east-1" });
  });

  it("puts the security group into the given VPC with the narrowable ingress sources", () => {
    const group = only(resources, "aws_security_group");
    expect(group.vpc_id).toBe("${var.vpc_id}");
    expect(group.description).toMatch(/SSH/);
    expect(group.description).toMatch(/HTTP/);
    expect(group.ingress.map((rule: any) => [rule.from_port, rule.to_port, rule.protocol, rule.cidr_blocks, rule.description])).toEqual([
      [22, 22, "tcp", "${var.ssh_ingress_cidrs}", "SSH"],
      [3000, 3000, "tcp", "${var.app_ingress_cidrs}", "application back end"],
      [80, 80, "tcp", "${var.app_ingress_cidrs}", "HTTP"],
    ]);
    expect(group.egress).toEqual([expect.objectContaining({ protocol: "-1", cidr_blocks: ["0.0.0.0/0"], description: "all outbound traffic" })]);
  });

  it("names the key pair and takes its public key from variables", () => {
    expect(only(resources, "aws_key_pair")).toEqual({ key_name: "${var.key_pair_name}", public_key: "${var.ssh_public_key}" });
  });

  it("tags the role <stack_name>/<instance_name> and hands it to the instance through the profile", () => {
    expect(only(resources, "aws_iam_role").tags).toEqual({ Name: "CrmHostStack/CrmServer" });
    expect(only(resources, "aws_iam_instance_profile").role).toBe(reference(json, "aws_iam_role", "name"));
  });

  it("wires every field of the instance", () => {
    const roleName = Object.keys(resources.aws_iam_role)[0];
    const [scriptLocal] = Object.keys(json.locals ?? {}).filter((name) => name.includes("user_data"));
    expect(only(resources, "aws_instance")).toMatchObject({
      availability_zone: "${var.availability_zone}",
      iam_instance_profile: reference(json, "aws_iam_instance_profile", "name"),
      ami: `\${data.aws_ssm_parameter.${imageDataSource(json)}.insecure_value}`,
      instance_type: "t3.micro",
      key_name: reference(json, "aws_key_pair", "key_name"),
      vpc_security_group_ids: [reference(json, "aws_security_group", "id")],
      subnet_id: "${var.subnet_id}",
      tags: { Name: "CrmHostStack/CrmServer" },
      user_data_base64: `\${base64gzip(local.${scriptLocal})}`,
      depends_on: [`aws_iam_role.${roleName}`],
      metadata_options: expect.objectContaining({ http_tokens: "required" }),
      root_block_device: expect.objectContaining({ encrypted: true }),
    });
  });

  it("reads the AMI from the image parameter, AL2023 kernel 6.1 x86_64 by default", () => {
    expect(imageDataSource(json)).toBeTruthy();
    expect(json.variable?.image_parameter.default).toBe("/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-x86_64");
  });

  it("checks the bootstrap version with CDK's rule and message", () => {
    const [check] = Object.values(resources.terraform_data).filter((data: any) => data.input?.bootstrap_version_checked);
    expect(check.lifecycle.precondition).toEqual([{
      condition: expect.stringMatching(/^\$\{!contains\(\["1", "2", "3", "4", "5"\], local\.\w+\)\}$/),
      error_message: BOOTSTRAP_VERSION_MESSAGE,
    }]);
    expect(json.variable?.bootstrap_version_parameter.default).toBe("/cdk-bootstrap/hnb659fds/version");
    expect(json.variable?.bootstrap_version.default).toBe("");
  });

  it("checks every input variable: a validation block, or for secrets a precondition that prints no value", () => {
    const secretChecks = Object.values(resources.terraform_data)
      .flatMap((data: any) => data.lifecycle.precondition)
      .map((condition: any) => condition.error_message);
    const variables = json.variable ?? {};
    expect(Object.keys(variables).sort()).toEqual([
      "app_db_password", "app_ingress_cidrs", "availability_zone", "bootstrap_version", "bootstrap_version_parameter",
      "db_root_password", "image_parameter", "key_pair_name", "source_host_token", "ssh_ingress_cidrs",
      "ssh_public_key", "subnet_id", "vpc_id",
    ]);
    for (const [name, variable] of Object.entries(variables)) {
      if (variable.sensitive) {
        expect(secretChecks).toContainEqual(expect.stringContaining(`Invalid value for variable "${name}"`));
        expect(variable.validation).toBeUndefined();
      } else {
        expect({ name, validation: variable.validation }).toEqual({
          name,
          validation: [expect.objectContaining({ error_message: expect.stringContaining(`"${name}"`) })],
        });
      }
    }
  });

  it("outputs the public IP as <instance_name>PublicIP, and what an operator needs next", () => {
    const dns = reference(json, "aws_instance", "public_dns");
    expect(Object.fromEntries(Object.entries<any>(json.output ?? {}).map(([name, output]) => [name, output.value]))).toEqual({
      CrmServerPublicIP: reference(json, "aws_instance", "public_ip"),
      CrmServerPublicDns: dns,
      CrmServerInstanceId: reference(json, "aws_instance", "id"),
      CrmServerFrontendUrl: `http://${dns}`,
      CrmServerBackendUrl: `http://${dns}:3000`,
      CrmServerSshCommand: `ssh ec2-user@${dns}`,
      CrmServerProvisioningLogCommand: `ssh ec2-user@${dns} sudo tail -n +1 -f /var/log/crm-provisioning.log`,
    });
    const renamed = synthStack({ instanceName: "Crm-Edge_1", loginUser: "admin", loginHome: "/home/admin", appDir: "/home/admin/crm" }).json;
    expect(Object.keys(renamed.output ?? {}).sort()).toEqual([
      "Crm-Edge_1BackendUrl", "Crm-Edge_1FrontendUrl", "Crm-Edge_1InstanceId", "Crm-Edge_1ProvisioningLogCommand",
      "Crm-Edge_1PublicDns", "Crm-Edge_1PublicIP", "Crm-Edge_1SshCommand",
    ]);
    expect(renamed.output?.["Crm-Edge_1SshCommand"].value).toMatch(/^ssh admin@/);
    expect(only(renamed.resource, "aws_instance").tags).toEqual({ Name: "CrmHostStack/Crm-Edge_1" });
  });

  it("requires Terraform 1.10 or later (S3-native state locking) and keeps local state relative to the stack", () => {
    expect(json.terraform?.required_version).toBe(">= 1.10.0");
    expect(json.terraform?.backend).toEqual({ local: { path: "../../../terraform.CrmHostStack.tfstate" } });
  });

  it("builds the user data from the three sensitive variables inside Terraform, each once, in base64", () => {
    const [script] = Object.entries(json.locals ?? {}).filter(([name]) => name.includes("user_data")).map(([, value]) => value);
    expect(script.startsWith("#!/bin/bash\n")).toBe(true);
    // Every template sequence left unescaped must be one of the three secret expressions.
    const expressions = script.match(/(?<![$%])[$%]\{[^}]*\}/g);
    expect(expressions).toEqual([
      "${base64encode(var.db_root_password)}",
      "${base64encode(var.app_db_password)}",
      "${base64encode(var.source_host_token)}",
    ]);
    for (const name of ["db_root_password", "app_db_password", "source_host_token"]) {
      expect(json.variable?.[name]).toMatchObject({ sensitive: true });
      expect(json.variable?.[name].default).toBeUndefined();
    }
  });

  it("never lets a secret value reach the synthesized JSON, even when it is set in the environment", () => {
    const secrets = {
      TF_VAR_db_root_password: "root-Secret-4f1b9c",
      TF_VAR_app_db_password: "app-Secret-8e2d7a",
      TF_VAR_source_host_token: "ghp_TokenSecret5c3e",
    };
    const saved = { ...process.env };
    Object.assign(process.env, secrets);
    try {
      const synthesized = synthStack().text;
      for (const value of Object.values(secrets)) {
        expect(synthesized).not.toContain(value);
        expect(synthesized).not.toContain(Buffer.from(value).toString("base64"));
      }
    } finally {
      process.env = saved;
    }
  });
});
