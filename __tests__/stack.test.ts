import { CADDY_DOWNLOAD_URL, CADDY_SHA512 } from "../settings/domain-settings";
import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { readdirSync, readFileSync } from "fs";
import { join } from "path";
import { TerraformVariable, Testing } from "cdktf";
import { CrmHostStack } from "../main";
import { BOOTSTRAP_VERSION_MESSAGE } from "../constructs/bootstrap-version-check";
import { BootstrapVariables } from "../constructs/bootstrap-variables";
import { DataVolumeVariables } from "../constructs/data-volume-variables";
import { DeploymentVariables } from "../constructs/deployment-variables";
import { HostSizingVariables } from "../constructs/host-sizing-variables";
import { ScaleOutVariables } from "../constructs/scale-out-variables";
import { SecretVariables } from "../constructs/secret-variables";
import { SubnetVariables } from "../constructs/subnet-variables";
import { EC2_DESCRIPTION } from "../constructs/crm-security-group";
import { DEREGISTRATION_DELAY_SECONDS } from "../constructs/application-load-balancer";
import { HEALTH_CHECK_GRACE_SECONDS, INSTANCE_WARMUP_SECONDS } from "../constructs/host-group";
import { exampleStackSettings, only } from "./support/synth";
import { loadStackSettings } from "../settings/stack-settings";
import { StackJson } from "../scripts/docs/terraform-json";
import { withModules } from "./support/harness/module-parameters";

function synthStack(changes: Record<string, unknown> = {}): { text: string; json: StackJson } {
  const stack = new CrmHostStack(Testing.app(), exampleStackSettings(changes));
  const text = Testing.synth(stack);
  return { text, json: JSON.parse(text) };
}

/** `${type.name.attribute}` of the only resource of a type. */
function reference(json: StackJson, type: string, attribute: string): string {
  const names = Object.keys(json.resource?.[type] ?? {});
  if (names.length !== 1) throw new Error(`expected one ${type}, found ${names.length}`);
  return `\${${type}.${names[0]}.${attribute}}`;
}

/** Name of the data source that reads the image parameter. */
function imageDataSource(json: StackJson): string {
  const names = Object.entries(json.data?.aws_ssm_parameter ?? {})
    .filter(([, source]) => source.name === "${var.image_parameter}")
    .map(([name]) => name);
  if (names.length !== 1) throw new Error(`expected one image data source, found ${names.length}`);
  return names[0];
}

describe("CrmHostStack", () => {
  const { text, json } = synthStack();
  const resources = json.resource ?? {};

  it("holds the original stack's resources, plan checks, the data volume and backups, Elastic IP and alarms", () => {
    expect(Object.keys(resources).sort()).toEqual([
      "aws_cloudwatch_log_group",
      "aws_cloudwatch_metric_alarm",
      "aws_dlm_lifecycle_policy",
      "aws_ebs_volume",
      "aws_eip",
      "aws_eip_association",
      "aws_iam_instance_profile",
      "aws_iam_role",
      "aws_iam_role_policy",
      "aws_iam_role_policy_attachment",
      "aws_instance",
      "aws_key_pair",
      "aws_route53_health_check",
      "aws_security_group",
      "aws_ssm_parameter",
      "aws_volume_attachment",
      "terraform_data",
    ]);
    // Two status-check alarms, four on what the host reports (app health, root and data disks, memory), the outside check's.
    // The modules: ops, telemetry, local-database (hostModules); their read policy beside the telemetry's.
    const counts: Record<string, number> = {
      terraform_data: 4,
      aws_iam_role: 2,
      aws_cloudwatch_metric_alarm: 7,
      aws_ssm_parameter: 3,
      aws_iam_role_policy: 2,
    };
    for (const type of Object.keys(resources)) {
      expect([type, Object.keys(resources[type]).length]).toEqual([type, counts[type] ?? 1]);
    }
    expect(text).toHaveProviderWithProperties(AwsProvider, { region: "us-east-1" });
  });

  it("puts the security group into the subnet's VPC with the narrowable ingress sources", () => {
    const group = only(resources, "aws_security_group");
    expect(group.vpc_id).toBe("${data.aws_subnet.crm_host.vpc_id}");
    expect(group.description).toMatch(/SSH/);
    expect(group.description).toMatch(/HTTP/);
    expect(
      group.ingress.map((rule: any) => [
        rule.from_port,
        rule.to_port,
        rule.protocol,
        rule.cidr_blocks,
        rule.description,
      ]),
    ).toEqual([
      [22, 22, "tcp", "${var.ssh_ingress_cidrs}", "SSH"],
      [3000, 3000, "tcp", "${var.app_ingress_cidrs}", "application back end"],
      [80, 80, "tcp", "${var.app_ingress_cidrs}", "HTTP"],
    ]);
    expect(group.egress).toEqual([
      expect.objectContaining({ protocol: "-1", cidr_blocks: ["0.0.0.0/0"], description: "all outbound traffic" }),
    ]);
  });

  it("names the key pair and takes its public key from variables", () => {
    expect(only(resources, "aws_key_pair")).toEqual({
      key_name: "${var.key_pair_name}",
      public_key: "${var.ssh_public_key}",
    });
  });

  /** Name of the role an AWS service may assume, from its trust policy. */
  function roleOf(service: string): string {
    const names = Object.entries(resources.aws_iam_role)
      .filter(([, role]) => JSON.parse(role.assume_role_policy as string).Statement[0].Principal.Service === service)
      .map(([name]) => name);
    if (names.length !== 1) throw new Error(`expected one role for ${service}, found ${names.length}`);
    return names[0];
  }

  it("tags the role <stack_name>/<instance_name> and hands it to the instance through the profile, without policies", () => {
    const role = roleOf("ec2.amazonaws.com");
    expect(resources.aws_iam_role[role].tags).toEqual({ Name: "CrmHostStack/CrmServer" });
    expect(only(resources, "aws_iam_instance_profile").role).toBe(`\${aws_iam_role.${role}.name}`);
    // The only policy attachment of the stack belongs to the snapshot service's role.
    expect(only(resources, "aws_iam_role_policy_attachment").role).toBe(
      `\${aws_iam_role.${roleOf("dlm.amazonaws.com")}.name}`,
    );
    expect(resources.aws_iam_role[role].managed_policy_arns).toBeUndefined();
    expect(resources.aws_iam_role[role].inline_policy).toBeUndefined();
  });

  it("wires every field of the instance", () => {
    const roleName = roleOf("ec2.amazonaws.com");
    const [scriptLocal] = Object.keys(json.locals ?? {}).filter((name) => name === "provisioning_script");
    expect(only(resources, "aws_instance")).toMatchObject({
      availability_zone: "${data.aws_subnet.crm_host.availability_zone}",
      iam_instance_profile: reference(json, "aws_iam_instance_profile", "name"),
      ami: `\${data.aws_ssm_parameter.${imageDataSource(json)}.insecure_value}`,
      instance_type: "${var.instance_type}",
      key_name: reference(json, "aws_key_pair", "key_name"),
      vpc_security_group_ids: [reference(json, "aws_security_group", "id")],
      subnet_id: "${var.subnet_id}",
      tags: { Name: "CrmHostStack/CrmServer" },
      user_data_base64: `\${base64gzip(local.${scriptLocal})}`,
      // The modules its first boot reads, and the policy that lets it.
      depends_on: [
        `aws_iam_role.${roleName}`,
        "aws_iam_role_policy.crm_host_telemetry",
        "aws_ssm_parameter.crm_host_modules_ops",
        "aws_ssm_parameter.crm_host_modules_telemetry",
        "aws_ssm_parameter.crm_host_modules_local_database",
        "aws_iam_role_policy.crm_host_modules",
      ],
      metadata_options: expect.objectContaining({ http_tokens: "required" }),
      root_block_device: expect.objectContaining({ encrypted: true, volume_size: "${var.root_volume_size_gib}" }),
      associate_public_ip_address: true,
      disable_api_termination: true,
      credit_specification: { cpu_credits: "standard" },
      monitoring: "${var.detailed_monitoring}",
      lifecycle: { ignore_changes: ["ami", "user_data", "user_data_base64"] },
    });
    expect(json.variable?.detailed_monitoring).toMatchObject({ type: "bool", default: false });
    // The original stack's size unless the user sets another.
    expect(json.variable?.instance_type).toMatchObject({ type: "string", default: "t3.micro" });
    expect(json.variable?.root_volume_size_gib).toMatchObject({ type: "number", default: 16 });
  });

  it("puts the database on a kept, encrypted gp3 volume in the instance's zone, attached as /dev/sdf", () => {
    expect(only(resources, "aws_ebs_volume")).toMatchObject({
      availability_zone: "${data.aws_subnet.crm_host.availability_zone}",
      type: "gp3",
      encrypted: true,
      size: "${var.data_volume_size_gib}",
      final_snapshot: true,
      tags: { Name: "CrmHostStack/CrmServer/data", Backup: "CrmHostStack/CrmServer/data" },
      lifecycle: { prevent_destroy: true },
    });
    expect(json.variable?.data_volume_size_gib.default).toBe(10);
    expect(only(resources, "aws_volume_attachment")).toMatchObject({
      device_name: "/dev/sdf",
      volume_id: reference(json, "aws_ebs_volume", "id"),
      instance_id: reference(json, "aws_instance", "id"),
      stop_instance_before_detaching: true,
    });
  });

  it("has no dependency cycle: the volume comes first, then the instance whose user data names it, then the attachment", () => {
    // Edges from every resource, local and data source to what its expressions and depends_on name.
    const nodes: Record<string, string> = {};
    for (const [type, blocks] of Object.entries(resources))
      for (const [name, body] of Object.entries(blocks)) nodes[`${type}.${name}`] = JSON.stringify(body);
    for (const [type, blocks] of Object.entries(json.data ?? {}))
      for (const [name, body] of Object.entries(blocks)) nodes[`data.${type}.${name}`] = JSON.stringify(body);
    for (const [name, value] of Object.entries(json.locals ?? {})) nodes[`local.${name}`] = JSON.stringify(value);
    const edges = (node: string) =>
      Object.keys(nodes).filter(
        (other) =>
          other !== node && new RegExp(`(?<![\\w.])${other.replace(/[.]/g, "[.]")}(?![\\w])`).test(nodes[node]),
      );
    const order: string[] = [];
    const state: Record<string, "visiting" | "done"> = {};
    const visit = (node: string, path: string[]) => {
      if (state[node] === "done") return;
      if (state[node] === "visiting") throw new Error(`dependency cycle: ${[...path, node].join(" -> ")}`);
      state[node] = "visiting";
      for (const next of edges(node)) visit(next, [...path, node]);
      state[node] = "done";
      order.push(node);
    };
    for (const node of Object.keys(nodes)) visit(node, []);
    const position = (prefix: string) => order.findIndex((node) => node.startsWith(prefix));
    expect(position("aws_ebs_volume.")).toBeLessThan(position("local."));
    expect(position("local.")).toBeLessThan(position("aws_instance."));
    expect(position("aws_instance.")).toBeLessThan(position("aws_volume_attachment."));
    // The Elastic IP too: allocated before the instance (its user data names it), associated after.
    expect(position("aws_eip.")).toBeLessThan(position("local."));
    expect(position("aws_instance.")).toBeLessThan(position("aws_eip_association."));
    // The volume depends on no instance, no attachment and no user data: only on the subnet (its zone).
    expect(edges(Object.keys(nodes).find((node) => node.startsWith("aws_ebs_volume."))!)).toEqual([
      "data.aws_subnet.crm_host",
    ]);
  });

  it("has every resource address that the README and docs/ name (the upgrade, restore and destroy procedures)", () => {
    const docs = join(__dirname, "..", "docs");
    const text = [
      join(__dirname, "..", "README.md"),
      ...readdirSync(docs)
        .filter((name) => name.endsWith(".md"))
        .map((name) => join(docs, name)),
    ]
      .map((file) => readFileSync(file, "utf8"))
      .join("\n");
    const named = [
      ...new Set(text.match(new RegExp(`\\b(${Object.keys(resources).join("|")})\\.[A-Za-z0-9_]+`, "g")) ?? []),
    ];
    expect(named).toEqual(expect.arrayContaining(["aws_instance.crm_host", "aws_ebs_volume.crm_data"]));
    // Addresses of the other example stacks' own resources (the secrets' policy of examples/prod.json) count too.
    const examples = ["prod.json", "scale-out.json"].map(
      (file) =>
        JSON.parse(
          Testing.synth(new CrmHostStack(Testing.app(), loadStackSettings(join(__dirname, "..", "examples", file)))),
        ).resource,
    );
    expect(
      named.filter((address) => {
        const [type, name] = address.split(".");
        return ![resources, ...examples].some((stack) => name in (stack[type] ?? {}));
      }),
    ).toEqual([]);
  });

  it("lets destroy delete the data volume only when the settings opt in", () => {
    const optedIn = synthStack({ deleteDataVolumeOnDestroy: true }).json;
    expect(only(optedIn.resource, "aws_ebs_volume").lifecycle).toEqual({ prevent_destroy: false });
  });

  it("snapshots the data volume every snapshot_interval_hours (24) through its own DLM role, keeping snapshot_retention_count (7)", () => {
    const policy = only(resources, "aws_dlm_lifecycle_policy");
    expect(policy.execution_role_arn).toBe(`\${aws_iam_role.${roleOf("dlm.amazonaws.com")}.arn}`);
    // The policy selects the data volume by tags the volume carries.
    const volumeTags = only(resources, "aws_ebs_volume").tags;
    expect(Object.keys(policy.policy_details.target_tags)).not.toHaveLength(0);
    expect(volumeTags).toMatchObject(policy.policy_details.target_tags);
    expect(policy.policy_details.schedule[0]).toMatchObject({
      create_rule: { interval: "${var.snapshot_interval_hours}", interval_unit: "HOURS" },
      retain_rule: { count: "${var.snapshot_retention_count}" },
      tags_to_add: { Stack: "CrmHostStack", Instance: "CrmServer" },
    });
    expect(policy.policy_details.schedule[0].cross_region_copy_rule).toBeUndefined();
    expect(json.variable?.snapshot_retention_count.default).toBe(7);
    expect(json.variable?.snapshot_interval_hours.default).toBe(24);
    expect(json.variable).not.toHaveProperty("snapshot_copy_retention_days");
  });

  it("copies every snapshot to the snapshotCopyRegion, encrypted, kept snapshot_copy_retention_days (7)", () => {
    const copied = synthStack({ snapshotCopyRegion: "eu-west-1" }).json;
    expect(only(copied.resource, "aws_dlm_lifecycle_policy").policy_details.schedule[0].cross_region_copy_rule).toEqual(
      [
        {
          target: "eu-west-1",
          encrypted: true,
          copy_tags: true,
          retain_rule: { interval: "${var.snapshot_copy_retention_days}", interval_unit: "DAYS" },
        },
      ],
    );
    expect(copied.variable?.snapshot_copy_retention_days).toMatchObject({ type: "number", default: 7 });
  });

  it("reads the AMI from the image parameter, AL2023 kernel 6.1 x86_64 by default", () => {
    expect(imageDataSource(json)).toBeTruthy();
    expect(json.variable?.image_parameter.default).toBe(
      "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-x86_64",
    );
  });

  it("checks the bootstrap version with CDK's rule and message", () => {
    const [precondition] = Object.values(resources.terraform_data)
      .filter((data: any) => data.input?.bootstrap_version_checked)
      .map((data: any) => data.lifecycle.precondition);
    expect(precondition).toEqual([
      {
        condition: expect.stringMatching(/^\$\{!contains\(\["1", "2", "3", "4", "5"\], local\.\w+\)\}$/),
        error_message: BOOTSTRAP_VERSION_MESSAGE,
      },
    ]);
    expect(json.variable?.bootstrap_version_parameter.default).toBe("/cdk-bootstrap/hnb659fds/version");
    expect(json.variable?.bootstrap_version.default).toBe("");
  });

  it("checks at plan that the secrets fit the room the script leaves in EC2's user data (terraform_data.secrets)", () => {
    const sizeCheck = (resources.terraform_data.secrets as any).lifecycle.precondition.find((condition: any) =>
      condition.error_message.includes("bytes together in base64"),
    );
    expect(sizeCheck.condition).toMatch(
      /^\$\{length\(base64encode\(var\.db_root_password\)\) \+ length\(base64encode\(var\.app_db_password\)\) \+ length\(base64encode\(var\.source_host_token\)\) <= (\d+)\}$/,
    );
    // At least three 256-character ASCII secrets, never more than EC2's limit.
    const room = Number(/<= (\d+)/.exec(sizeCheck.condition)![1]);
    expect(room).toBeGreaterThanOrEqual(3 * 344);
    expect(room).toBeLessThan(16 * 1024);
  });

  it("checks every input variable: validation blocks, or for secrets and the SSH key a precondition that prints no value", () => {
    const secretChecks = Object.values(resources.terraform_data)
      .flatMap((data: any) => data.lifecycle.precondition)
      .map((condition: any) => condition.error_message);
    const variables = json.variable ?? {};
    expect(Object.keys(variables).sort()).toEqual([
      "app_db_password",
      "app_ingress_cidrs",
      "availability_zone",
      "bootstrap_version",
      "bootstrap_version_parameter",
      "data_volume_size_gib",
      "data_volume_snapshot_id",
      "db_root_password",
      "detailed_monitoring",
      "image_parameter",
      "inbound_rule_quota",
      "instance_type",
      "key_pair_name",
      "log_retention_days",
      "root_volume_size_gib",
      "snapshot_interval_hours",
      "snapshot_retention_count",
      "source_host_token",
      "ssh_ingress_cidrs",
      "ssh_public_key",
      "subnet_id",
      "vpc_id",
    ]);
    for (const [name, variable] of Object.entries(variables)) {
      if (variable.type === "bool") {
        // Terraform's type check refuses anything else, naming the variable (engine test).
        expect(variable.validation).toBeUndefined();
      } else if (variable.sensitive) {
        expect(secretChecks).toContainEqual(expect.stringContaining(`Invalid value for variable "${name}"`));
        expect(variable.validation).toBeUndefined();
      } else {
        expect({ name, validation: variable.validation }).toEqual({
          name,
          validation: expect.arrayContaining([
            expect.objectContaining({ error_message: expect.stringContaining(`"${name}"`) }),
          ]),
        });
        expect(variable.validation!.every((check) => check.error_message.includes(`"${name}"`))).toBe(true);
      }
    }
  });

  it("outputs the public IP as <instance_name>PublicIP, and what an operator needs next: all on the Elastic IP", () => {
    const dns = reference(json, "aws_eip", "public_dns");
    expect(
      Object.fromEntries(Object.entries<any>(json.output ?? {}).map(([name, output]) => [name, output.value])),
    ).toEqual({
      CrmServerPublicIP: reference(json, "aws_eip", "public_ip"),
      CrmServerPublicDns: dns,
      CrmServerInstanceId: reference(json, "aws_instance", "id"),
      CrmServerFrontendUrl: `http://${dns}`,
      CrmServerBackendUrl: `http://${dns}:3000`,
      CrmServerSshCommand: `ssh ec2-user@${dns}`,
      CrmServerProvisioningLogCommand: `ssh ec2-user@${dns} sudo tail -n +1 -f /var/log/crm-provisioning.log`,
      CrmServerDataVolumeId: reference(json, "aws_ebs_volume", "id"),
    });
    const renamed = synthStack({
      instanceName: "Crm-Edge_1",
      loginUser: "admin",
      loginHome: "/home/admin",
      appDir: "/home/admin/crm",
    }).json;
    expect(Object.keys(renamed.output ?? {}).sort()).toEqual([
      "Crm-Edge_1BackendUrl",
      "Crm-Edge_1DataVolumeId",
      "Crm-Edge_1FrontendUrl",
      "Crm-Edge_1InstanceId",
      "Crm-Edge_1ProvisioningLogCommand",
      "Crm-Edge_1PublicDns",
      "Crm-Edge_1PublicIP",
      "Crm-Edge_1SshCommand",
    ]);
    expect(renamed.output?.["Crm-Edge_1SshCommand"].value).toMatch(/^ssh admin@/);
    expect(only(renamed.resource, "aws_instance").tags).toEqual({ Name: "CrmHostStack/Crm-Edge_1" });
  });

  it("watches what the host reports (app health, disks, memory) with alarms, lets it report into its namespace and log group only", () => {
    const alarms = resources.aws_cloudwatch_metric_alarm;
    expect(Object.keys(alarms).sort()).toEqual([
      "crm_front",
      "crm_host_app_health",
      "crm_host_data_disk",
      "crm_host_instance_check",
      "crm_host_memory",
      "crm_host_root_disk",
      "crm_host_system_check",
    ]);
    expect(alarms.crm_host_app_health).toMatchObject({
      namespace: "CRM/Host",
      metric_name: "AppHealthy",
      dimensions: { InstanceId: "${aws_instance.crm_host.id}" },
      treat_missing_data: "breaching",
    });
    expect(alarms.crm_host_data_disk.dimensions).toEqual({ InstanceId: "${aws_instance.crm_host.id}", Volume: "data" });
    // No e-mail address in the example settings: no topic, nobody told.
    expect(alarms.crm_host_app_health.alarm_actions).toBeUndefined();
    expect(only(resources, "aws_cloudwatch_log_group")).toMatchObject({
      name: "/crm/CrmHostStack/CrmServer",
      retention_in_days: "${var.log_retention_days}",
    });
    expect(json.variable?.log_retention_days.default).toBe(365);
    expect(resources.aws_iam_role_policy.crm_host_telemetry).toMatchObject({
      role: "${aws_iam_role.crm_host.name}",
      policy: "${data.aws_iam_policy_document.crm_host_telemetry.json}",
    });
    expect(
      (json.data?.aws_iam_policy_document?.crm_host_telemetry.statement as { resources: string[] }[])[1].resources,
    ).toEqual(["${aws_cloudwatch_log_group.crm_host.arn}", "${aws_cloudwatch_log_group.crm_host.arn}:log-stream:*"]);
    // The host ships its logs to that group: the script names it, and the instance waits for the policy.
    expect(json.locals?.provisioning_script).toContain("\nreadonly LOG_GROUP='/crm/CrmHostStack/CrmServer' ");
    expect(only(resources, "aws_instance").depends_on).toContain("aws_iam_role_policy.crm_host_telemetry");
  });

  it("puts the user's tags on every resource through the provider's default_tags, and no default_tags without them", () => {
    expect(json.provider?.aws[0].default_tags).toBeUndefined();
    const tagged = synthStack({ tags: { CostCenter: "crm-42", "owner:team": "ops@example" } }).json;
    expect(tagged.provider?.aws[0].default_tags).toEqual([
      { tags: { CostCenter: "crm-42", "owner:team": "ops@example" } },
    ]);
    // The resources keep their own tags; the provider merges the user's under them.
    expect(only(tagged.resource, "aws_instance").tags).toEqual({ Name: "CrmHostStack/CrmServer" });
  });

  it("turns on the metadata service's IPv6 address when the settings read it there, and only then", () => {
    expect(only(resources, "aws_instance").metadata_options.http_protocol_ipv6).toBeUndefined();
    const ipv6 = synthStack({ metadataEndpoint: "http://[fd00:ec2::254]" }).json;
    expect(only(ipv6.resource, "aws_instance").metadata_options.http_protocol_ipv6).toBe("enabled");
  });

  it("checks at plan that the instance type (t3.micro by default) runs the image's architecture, and that the CIDR lists fit the rule quota", () => {
    expect(only(json.data, "aws_ec2_instance_type").instance_type).toBe("${var.instance_type}");
    expect(only(json.data, "aws_ami").lifecycle.postcondition[0].error_message).toContain(
      "instance type ${var.instance_type} runs",
    );
    expect(only(json.data, "aws_ami").lifecycle.postcondition[0].error_message).toMatch(
      /^Invalid value for variable "image_parameter": /,
    );
    const [quota] = only(resources, "aws_security_group").lifecycle.precondition;
    expect(quota.condition).toBe(
      "${(((length(var.ssh_ingress_cidrs) + length(var.app_ingress_cidrs)) + length(var.app_ingress_cidrs)) <= var.inbound_rule_quota)}",
    );
    expect(quota.error_message).toMatch(
      /^Invalid value for variable "ssh_ingress_cidrs" or "app_ingress_cidrs": expected at most \$\{var.inbound_rule_quota\} inbound rules, AWS's quota "Inbound or outbound rules per security group" \(variable inbound_rule_quota: /,
    );
  });

  it("requires Terraform 1.10 or later (S3-native state locking) and keeps local state relative to the stack", () => {
    expect(json.terraform?.required_version).toBe(">= 1.10.0");
    expect(json.terraform?.backend).toEqual({ local: { path: "../../../terraform.CrmHostStack.tfstate" } });
  });

  it("builds the user data from the three sensitive variables inside Terraform, each once, in base64, and the volume id", () => {
    const [script] = Object.entries(json.locals ?? {})
      .filter(([name]) => name === "provisioning_script")
      .map(([, value]) => value as string);
    expect(script.startsWith("#!/bin/bash\n")).toBe(true);
    // Every template sequence left unescaped must be one of the three secret expressions.
    const expressions = script.match(/(?<![$%])[$%]\{[^}]*\}/g);
    expect(expressions).toEqual([
      "${base64encode(var.db_root_password)}",
      "${base64encode(var.app_db_password)}",
      "${base64encode(var.source_host_token)}",
      `\${${reference(json, "aws_ebs_volume", "id").slice(2, -1)}}`,
      `\${${reference(json, "aws_eip", "public_ip").slice(2, -1)}}`,
    ]);
    expect(script).toContain(`\nreadonly DATA_VOLUME_ID='${reference(json, "aws_ebs_volume", "id")}'\n`);
    expect(script).toContain(`\nreadonly ELASTIC_IP='${reference(json, "aws_eip", "public_ip")}'\n`);
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

describe("CrmHostStack in parameter-store mode (examples/prod.json)", () => {
  const settings = loadStackSettings(join(__dirname, "..", "examples", "prod.json"));
  const { json } = (() => {
    const text = Testing.synth(new CrmHostStack(Testing.app(), settings));
    return { json: JSON.parse(text) as StackJson };
  })();
  const resources = json.resource ?? {};
  const userDataMode = synthStack().json;

  it("is the mode of examples/prod.json", () => {
    expect(settings.provisioning.secrets).toBe("parameter-store");
  });

  it("has no secret variable: the other variables only, of which only the SSH public key is sensitive (a pasted private key never shows)", () => {
    const variables = json.variable ?? {};
    expect(Object.keys(variables).filter((name) => variables[name].sensitive)).toEqual(["ssh_public_key"]);
    expect(Object.keys(variables).sort()).toEqual(
      Object.keys(userDataMode.variable ?? {})
        .filter((name) => !["db_root_password", "app_db_password", "source_host_token"].includes(name))
        .sort(),
    );
    expect(JSON.stringify(json)).not.toMatch(/var\.(db_root_password|app_db_password|source_host_token)/);
    // No secret assigned in the script's header (the ops code's pattern for such lines starts with a bracket).
    expect(json.locals?.provisioning_script as string).not.toMatch(/^(readonly )?[A-Z_]+_B64='[^'[]/m);
  });

  it("gives the instance role three policies, the modules', the secrets' and the telemetry's (the snapshot role keeps its own), before the instance boots", () => {
    expect(Object.keys(resources.aws_iam_role_policy ?? {}).sort()).toEqual([
      "crm_host_modules",
      "crm_host_telemetry",
      "crm_secrets",
    ]);
    expect(resources.aws_iam_role_policy.crm_secrets).toMatchObject({
      role: "${aws_iam_role.crm_host.name}",
      policy: "${data.aws_iam_policy_document.crm_secrets.json}",
    });
    expect(only(resources, "aws_iam_role_policy_attachment").role).toBe("${aws_iam_role.crm_data_snapshots.name}");
    expect(resources.aws_iam_role.crm_host.inline_policy).toBeUndefined();
    expect(resources.aws_iam_role.crm_host.managed_policy_arns).toBeUndefined();
    expect(only(resources, "aws_instance").depends_on).toEqual([
      "aws_iam_role.crm_host",
      "aws_iam_role_policy.crm_host_telemetry",
      "aws_iam_role_policy.crm_secrets",
      ...["ops", "telemetry", "parameter_store", "front", "local_database"].map(
        (module) => `aws_ssm_parameter.crm_host_modules_${module}`,
      ),
      "aws_iam_role_policy.crm_host_modules",
    ]);
    // The modules' policy: reading exactly those parameters.
    expect(json.data?.aws_iam_policy_document?.crm_host_modules).toEqual({
      statement: [
        {
          sid: "ReadTheModules",
          effect: "Allow",
          actions: ["ssm:GetParameters"],
          resources: ["ops", "telemetry", "parameter_store", "front", "local_database"].map(
            (module) => `\${aws_ssm_parameter.crm_host_modules_${module}.arn}`,
          ),
        },
      ],
    });
    expect(resources.aws_ssm_parameter.crm_host_modules_front).toMatchObject({
      name: "/CrmHost-prod/crm/modules/front",
      type: "String",
      tier: "Standard",
    });
    const statements = (
      json.data?.aws_iam_policy_document?.crm_secrets as { statement: { actions: string[]; resources: string[] }[] }
    ).statement;
    expect(statements.map((statement) => statement.actions)).toEqual([["ssm:GetParameters"], ["kms:Decrypt"]]);
    expect(statements[0].resources).toEqual(
      ["db-root-password", "app-db-password", "source-host-token"].map(
        (leaf) =>
          `arn:aws:ssm:us-east-1:\${data.aws_caller_identity.crm_secrets.account_id}:parameter/CrmHost-prod/crm/${leaf}`,
      ),
    );
    expect(only(json.data, "aws_kms_key").key_id).toBe("alias/aws/ssm");
  });

  it("builds user data that names the parameters and holds no secret expression: only the volume id and the Elastic IP are left to Terraform", () => {
    const script = json.locals?.provisioning_script as string;
    expect(script.match(/(?<![$%])[$%]\{[^}]*\}/g)).toEqual([
      "${aws_ebs_volume.crm_data.id}",
      "${aws_eip.crm_host.public_ip}",
    ]);
    expect(script).toContain("\nreadonly APP_DB_PASSWORD_PARAMETER='/CrmHost-prod/crm/app-db-password'\n");
    expect(script).toContain("\nreadonly SECRETS_REGION='us-east-1'\n");
  });

  it("checks at plan that the three parameters exist, in the user-data mode's terraform_data.secrets", () => {
    const check = resources.terraform_data.secrets as { lifecycle: { precondition: { error_message: string }[] } };
    expect(check.lifecycle.precondition).toHaveLength(1);
    expect(check.lifecycle.precondition[0].error_message).toContain('"npm run secrets -- CrmHost-prod set"');
  });

  it("uses a customer key when the settings name one", () => {
    const custom = new CrmHostStack(Testing.app(), { ...settings, secretsKmsKeyId: "alias/crm-secrets" });
    expect(only(JSON.parse(Testing.synth(custom)).data, "aws_kms_key").key_id).toBe("alias/crm-secrets");
  });
});

describe("CrmHostStack with a domain and an alarm e-mail address", () => {
  const domain = { hostedZone: "example.com", name: "crm.example.com" };
  const { json } = synthStack({ domain, alarmEmail: "ops@example.com" });
  const plain = synthStack().json;
  const script = (stack: StackJson) => stack.locals?.provisioning_script as string;

  it("adds the zone lookup, the A record to the Elastic IP and the alarm topic, under readable names", () => {
    const added = (stack: StackJson, base: StackJson) =>
      [
        ...Object.entries(stack.resource ?? {}).flatMap(([type, blocks]) =>
          Object.keys(blocks).map((name) => `${type}.${name}`),
        ),
        ...Object.entries(stack.data ?? {}).flatMap(([type, blocks]) =>
          Object.keys(blocks).map((name) => `data.${type}.${name}`),
        ),
      ]
        .filter((address) => {
          const [first, second, third] = address.split(".");
          return first === "data" ? !base.data?.[second]?.[third] : !base.resource?.[first]?.[second];
        })
        .sort();
    expect(added(json, plain)).toEqual([
      "aws_kms_key.crm_host_alarms",
      "aws_route53_record.crm_site",
      "aws_sns_topic.crm_host_alarms",
      "aws_sns_topic_subscription.crm_host_alarms",
      // The front's module, which the first boot of a domain runs.
      "aws_ssm_parameter.crm_host_modules_front",
      "data.aws_caller_identity.crm_host_alarms",
      "data.aws_route53_zone.crm_site",
    ]);
    expect(only(json.resource, "aws_route53_record")).toMatchObject({
      name: "crm.example.com",
      type: "A",
      records: ["${aws_eip.crm_host.public_ip}"],
    });
    expect(only(json.resource, "aws_sns_topic_subscription")).toMatchObject({
      protocol: "email",
      endpoint: "ops@example.com",
    });
    // Every alarm tells the topic: the status checks' and those on what the host reports.
    for (const alarm of Object.values(json.resource?.aws_cloudwatch_metric_alarm ?? {})) {
      expect(alarm.alarm_actions).toContain("${aws_sns_topic.crm_host_alarms.arn}");
      expect(alarm.ok_actions).toEqual(["${aws_sns_topic.crm_host_alarms.arn}"]);
    }
  });

  it("checks the front from outside: the domain over HTTPS (the plain stack: the Elastic IP's port 80), alarming in us-east-1 to the topic", () => {
    expect(only(json.resource, "aws_route53_health_check")).toMatchObject({
      fqdn: "crm.example.com",
      type: "HTTPS",
      port: 443,
      enable_sni: true,
      resource_path: "/",
    });
    expect(only(plain.resource, "aws_route53_health_check")).toMatchObject({
      ip_address: "${aws_eip.crm_host.public_ip}",
      type: "HTTP",
      port: 80,
    });
    expect(json.provider?.aws.map((provider) => provider.region)).toEqual(["us-east-1", "us-east-1"]);
    expect(json.resource?.aws_cloudwatch_metric_alarm?.crm_front).toMatchObject({
      provider: "aws.crm_front_us_east_1",
      dimensions: { HealthCheckId: "${aws_route53_health_check.crm_front.id}" },
    });
  });

  it("outside us-east-1, tells the outside check's alarm to a topic of its own in us-east-1, tagged as the stack", () => {
    const elsewhere = synthStack({ region: "eu-west-1", alarmEmail: "ops@example.com", tags: { team: "crm" } }).json;
    expect(elsewhere.provider?.aws).toEqual([
      expect.objectContaining({ region: "eu-west-1", default_tags: [{ tags: { team: "crm" } }] }),
      { alias: "crm_front_us_east_1", region: "us-east-1", default_tags: [{ tags: { team: "crm" } }] },
    ]);
    expect(Object.keys(elsewhere.resource?.aws_sns_topic ?? {}).sort()).toEqual([
      "crm_front_alarms",
      "crm_host_alarms",
    ]);
    expect(elsewhere.resource?.aws_sns_topic?.crm_front_alarms.provider).toBe("aws.crm_front_us_east_1");
    expect(elsewhere.resource?.aws_sns_topic?.crm_host_alarms.provider).toBeUndefined();
    expect(elsewhere.resource?.aws_cloudwatch_metric_alarm?.crm_front.alarm_actions).toEqual([
      "${aws_sns_topic.crm_front_alarms.arn}",
    ]);
  });

  it("opens 443 only with the domain", () => {
    const ports = (stack: StackJson) =>
      only(stack.resource, "aws_security_group").ingress.map((rule: { from_port: number }) => rule.from_port);
    expect(ports(json)).toEqual([22, 3000, 80, 443]);
    expect(ports(plain)).toEqual([22, 3000, 80]);
  });

  it("gives the front end's URL as https on the name, the back end's on 3000", () => {
    expect(json.output?.CrmServerFrontendUrl.value).toBe("https://crm.example.com");
    expect(json.output?.CrmServerBackendUrl.value).toBe("http://crm.example.com:3000");
  });

  it("carries the front (HTTPS) module and the domain in the user data only with a domain, and no port-80 redirect then", () => {
    expect(script(json)).toMatch(/^readonly MODULES=\(.*'front:[0-9a-f]{64}'/m);
    expect(json.resource?.aws_ssm_parameter.crm_host_modules_front.name).toBe("/CrmHostStack/crm/modules/front");
    expect(script(json)).toContain(
      "\nreadonly DOMAIN_NAME='crm.example.com' ACME_DIRECTORY='https://acme-v02.api.letsencrypt.org/directory'\n",
    );
    expect(script(json)).toContain("\nreadonly REDIRECT_HTTP_PORT=false\n");
    for (const absent of ["'front:", "DOMAIN_NAME", "acme"]) expect(script(plain)).not.toContain(absent);
    expect(plain.resource?.aws_ssm_parameter.crm_host_modules_front).toBeUndefined();
    expect(script(plain)).toContain("\nreadonly REDIRECT_HTTP_PORT=true\n");
    // Where the ops tool gets the front from, on every single host (ensure_front).
    for (const host of [json, plain])
      expect(script(host)).toContain(`\nreadonly CADDY_URL='${CADDY_DOWNLOAD_URL}' CADDY_SHA512='${CADDY_SHA512}'\n`);
  });
});

describe('CrmHostStack with "topology": "scale-out" (examples/scale-out.json)', () => {
  const settings = loadStackSettings(join(__dirname, "..", "examples", "scale-out.json"));
  const json: StackJson = JSON.parse(Testing.synth(new CrmHostStack(Testing.app(), settings)));
  const resources = json.resource ?? {};
  const groups: Record<string, any> = resources.aws_security_group ?? {};
  const ports = (group: string) => (groups[group].ingress as { from_port: number }[]).map((rule) => rule.from_port);

  it("is the topology of examples/scale-out.json, with its secrets in Parameter Store and a domain", () => {
    expect(settings.provisioning).toMatchObject({ topology: "scale-out", secrets: "parameter-store" });
    expect(settings.provisioning.domain?.name).toBe("crm.example.com");
  });

  it("has no single host, data volume or Elastic IP: RDS, a load balancer, a launch template and an Auto Scaling group instead", () => {
    for (const type of ["aws_instance", "aws_ebs_volume", "aws_eip", "aws_dlm_lifecycle_policy"]) {
      expect(resources).not.toHaveProperty(type);
    }
    for (const type of [
      "aws_db_instance",
      "aws_lb",
      "aws_launch_template",
      "aws_autoscaling_group",
      "aws_acm_certificate",
    ]) {
      expect(Object.keys(resources[type] ?? {})).toHaveLength(1);
    }
    expect(Object.keys(json.variable ?? {})).not.toEqual(
      expect.arrayContaining(["subnet_id", "vpc_id", "availability_zone", "db_root_password"]),
    );
  });

  it("chains the security groups: the internet to the load balancer (80, 3000, 443), it to the hosts on 3000, the hosts to the database on 3306", () => {
    expect(ports("crm_load_balancer")).toEqual([3000, 80, 443]);
    expect(groups.crm_load_balancer.ingress[0].cidr_blocks).toBe("${var.app_ingress_cidrs}");
    expect(groups.crm_load_balancer.egress).toMatchObject([{ from_port: 3000, to_port: 3000, protocol: "tcp" }]);
    expect(groups.crm_hosts.ingress).toMatchObject([
      { from_port: 22, cidr_blocks: "${var.ssh_ingress_cidrs}" },
      { from_port: 3000, to_port: 3000, security_groups: ["${aws_security_group.crm_load_balancer.id}"] },
    ]);
    expect(groups.crm_database.ingress).toMatchObject([
      { from_port: 3306, to_port: 3306, security_groups: ["${aws_security_group.crm_hosts.id}"] },
    ]);
    expect(groups.crm_database.egress).toEqual([]);
    for (const group of Object.values(groups)) expect(group.vpc_id).toBe("${values(local.crm_hosts_subnet_vpcs)[0]}");
  });

  it("puts the database, the load balancer and the group on subnet_ids, the database behind its group, never public", () => {
    expect(only(resources, "aws_db_subnet_group").subnet_ids).toBe("${var.subnet_ids}");
    expect(only(resources, "aws_lb").subnets).toBe("${var.subnet_ids}");
    expect(only(resources, "aws_autoscaling_group").vpc_zone_identifier).toBe("${var.subnet_ids}");
    expect(only(resources, "aws_db_instance")).toMatchObject({
      identifier: "crmhost-scale-crm",
      publicly_accessible: false,
      vpc_security_group_ids: ["${aws_security_group.crm_database.id}"],
      instance_class: "${var.database_instance_class}",
      multi_az: "${var.database_multi_az}",
      backup_retention_period: "${var.database_backup_retention_days}",
      deletion_protection: "${var.database_deletion_protection}",
    });
  });

  it("launches the hosts from the image parameter with the instance profile and the hosts' group, into the target group, after the secrets' policy", () => {
    expect(only(resources, "aws_launch_template")).toMatchObject({
      image_id: `\${data.aws_ssm_parameter.${imageDataSource(json)}.insecure_value}`,
      instance_type: "${var.host_instance_type}",
      iam_instance_profile: { name: "${aws_iam_instance_profile.crm_host.name}" },
      key_name: "${aws_key_pair.crm_host.key_name}",
      user_data: "${base64gzip(local.provisioning_script)}",
      network_interfaces: [expect.objectContaining({ security_groups: ["${aws_security_group.crm_hosts.id}"] })],
      block_device_mappings: [expect.objectContaining({ device_name: "${data.aws_ami.crm_host.root_device_name}" })],
    });
    expect(only(resources, "aws_autoscaling_group")).toMatchObject({
      launch_template: {
        id: "${aws_launch_template.crm_hosts.id}",
        version: "${aws_launch_template.crm_hosts.latest_version}",
      },
      target_group_arns: ["${aws_lb_target_group.crm_hosts.arn}"],
      min_size: "${var.hosts_min_size}",
      depends_on: [
        "aws_iam_role.crm_host",
        "aws_iam_role_policy.crm_secrets",
        "aws_iam_role_policy.crm_host_telemetry",
        ...["ops", "telemetry", "parameter_store", "remote_database"].map(
          (module) => `aws_ssm_parameter.crm_host_modules_${module}`,
        ),
        "aws_iam_role_policy.crm_host_modules",
      ],
    });
  });

  it("keeps every desired host serving through an instance refresh, with the deregistration delay, grace and warmup of the app's measured start", () => {
    expect(only(resources, "aws_autoscaling_group")).toMatchObject({
      health_check_type: "ELB",
      health_check_grace_period: HEALTH_CHECK_GRACE_SECONDS,
      instance_refresh: {
        strategy: "Rolling",
        preferences: {
          min_healthy_percentage: 100,
          max_healthy_percentage: "${var.instance_refresh_max_healthy_percentage}",
          instance_warmup: String(INSTANCE_WARMUP_SECONDS),
        },
      },
    });
    expect(json.variable?.instance_refresh_max_healthy_percentage).toMatchObject({ default: 200 });
    expect(only(resources, "aws_lb_target_group").deregistration_delay).toBe(String(DEREGISTRATION_DELAY_SECONDS));
    expect(only(resources, "aws_lb").idle_timeout).toBe(DEREGISTRATION_DELAY_SECONDS);
  });

  it("gives the launched hosts and their volumes the user's tags (default_tags does not reach them), and sizes their root volume by the variable", () => {
    const tagged = JSON.parse(
      Testing.synth(new CrmHostStack(Testing.app(), { ...settings, tags: { CostCenter: "crm-42" } })),
    );
    const template = only(tagged.resource, "aws_launch_template");
    expect(template.tag_specifications).toEqual([
      { resource_type: "instance", tags: { CostCenter: "crm-42", Name: "CrmHost-scale/CrmServer" } },
      { resource_type: "volume", tags: { CostCenter: "crm-42", Name: "CrmHost-scale/CrmServer" } },
    ]);
    expect(tagged.provider.aws[0].default_tags).toEqual([{ tags: { CostCenter: "crm-42" } }]);
    expect(only(resources, "aws_launch_template").block_device_mappings[0].ebs.volume_size).toBe(
      "${var.root_volume_size_gib}",
    );
    expect(json.variable?.root_volume_size_gib).toMatchObject({ default: 16 });
    expect(json.variable).not.toHaveProperty("instance_type");
  });

  it("checks the front from outside: the domain over HTTPS, or without one the load balancer's name on port 80", () => {
    expect(only(resources, "aws_route53_health_check")).toMatchObject({ fqdn: "crm.example.com", type: "HTTPS" });
    const { domain: _none, ...plain } = settings.provisioning;
    const bare = JSON.parse(
      Testing.synth(new CrmHostStack(Testing.app(), { ...settings, provisioning: plain } as typeof settings)),
    );
    expect(only(bare.resource, "aws_route53_health_check")).toMatchObject({
      fqdn: "${aws_lb.crm_load_balancer.dns_name}",
      type: "HTTP",
      port: 80,
    });
  });

  it("watches the load balancer (5xx, unhealthy hosts, no healthy host, response time) and the database (free storage, CPU, connections, memory)", () => {
    const alarms = resources.aws_cloudwatch_metric_alarm;
    expect(Object.keys(alarms).sort()).toEqual([
      "crm_database_connections",
      "crm_database_cpu",
      "crm_database_free_memory",
      "crm_database_free_storage",
      "crm_front",
      "crm_load_balancer_5xx",
      "crm_load_balancer_healthy_hosts",
      "crm_load_balancer_response_time",
      "crm_load_balancer_unhealthy_hosts",
    ]);
    for (const name of ["crm_load_balancer_unhealthy_hosts", "crm_load_balancer_healthy_hosts"]) {
      expect(alarms[name].dimensions).toEqual({
        LoadBalancer: "${aws_lb.crm_load_balancer.arn_suffix}",
        TargetGroup: "${aws_lb_target_group.crm_hosts.arn_suffix}",
      });
    }
    expect(alarms.crm_database_cpu.dimensions).toEqual({
      DBInstanceIdentifier: "${aws_db_instance.crm_database.identifier}",
    });
    // The memory threshold follows database_instance_class: EC2's instance type of its name, without "db.".
    expect(json.data?.aws_ec2_instance_type.crm_database_class).toEqual({
      instance_type: '${trimprefix(var.database_instance_class, "db.")}',
    });
    expect(alarms.crm_database_free_memory.threshold).toBe(
      "${floor((data.aws_ec2_instance_type.crm_database_class.memory_size * 104857.6))}",
    );
    expect(only(resources, "aws_cloudwatch_log_group").name).toBe("/crm/CrmHost-scale/CrmServer");
    // Its hosts ship their logs there and publish their metrics too (no per-host alarm: they come and go).
    expect(json.locals?.provisioning_script).toContain("\nreadonly LOG_GROUP='/crm/CrmHost-scale/CrmServer' ");
    expect(only(resources, "aws_autoscaling_group").depends_on).toContain("aws_iam_role_policy.crm_host_telemetry");
    expect(resources).not.toHaveProperty("aws_sns_topic");
  });

  it("tells the alarmEmail of every scale-out alarm through the alarm topic", () => {
    const told = JSON.parse(
      Testing.synth(new CrmHostStack(Testing.app(), { ...settings, alarmEmail: "ops@example.com" })),
    );
    expect(Object.keys(told.resource.aws_sns_topic)).toEqual(["crm_host_alarms"]);
    expect(told.resource.aws_sns_topic_subscription.crm_host_alarms.endpoint).toBe("ops@example.com");
    for (const alarm of Object.values(told.resource.aws_cloudwatch_metric_alarm) as {
      alarm_actions: string[];
      ok_actions: string[];
    }[]) {
      expect([alarm.alarm_actions, alarm.ok_actions]).toEqual([
        ["${aws_sns_topic.crm_host_alarms.arn}"],
        ["${aws_sns_topic.crm_host_alarms.arn}"],
      ]);
    }
  });

  it("gives the hosts no read of the database's master secret, and puts the database, the load balancer's name and the release in the user data", () => {
    // No policy of the hosts' role names Secrets Manager or the master secret: db-setup brings it (docs/scale-out.md).
    const policies = JSON.stringify([
      json.data?.aws_iam_policy_document,
      resources.aws_iam_role_policy,
      resources.aws_iam_role_policy_attachment,
    ]);
    expect(policies).not.toMatch(/secretsmanager|master_user_secret/);
    expect(json.locals?.provisioning_script).not.toMatch(/master_user_secret|MASTER_SECRET/);
    const script = json.locals?.provisioning_script as string;
    expect(script).toContain("DB_PORT='3306'");
    for (const expression of ["${aws_db_instance.crm_database.address}", "${var.release_ref}"]) {
      expect(script.split(expression)).toHaveLength(2);
    }
    expect(script).toContain(
      "readonly FRONTEND_URI='https://crm.example.com' BACKEND_URI='http://crm.example.com:3000'",
    );
    expect(withModules(script)).toContain("one_host_at_a_time_scale_out()");
    expect(script).not.toContain("readonly DB_ROOT_PASSWORD_PARAMETER=");
    expect(script).toContain("readonly APP_DB_PASSWORD_PARAMETER=");
  });

  it("serves HTTPS with the validated certificate, and points the domain at the load balancer by an alias", () => {
    expect(resources.aws_lb_listener?.crm_load_balancer_https.certificate_arn).toBe(
      "${aws_acm_certificate_validation.crm_site.certificate_arn}",
    );
    expect(resources.aws_route53_record?.crm_site.alias).toEqual({
      name: "${aws_lb.crm_load_balancer.dns_name}",
      zone_id: "${aws_lb.crm_load_balancer.zone_id}",
      evaluate_target_health: true,
    });
    expect(resources.aws_route53_record?.crm_site_validation.zone_id).toBe("${data.aws_route53_zone.crm_site.zone_id}");
  });

  it("outputs the load balancer's name, the URLs on the domain, the database's endpoint and secret, and the group's name", () => {
    expect(Object.keys(json.output ?? {}).sort()).toEqual([
      "CrmServerAutoScalingGroupName",
      "CrmServerBackendUrl",
      "CrmServerDatabaseEndpoint",
      "CrmServerDatabaseSecretArn",
      "CrmServerFrontendUrl",
      "CrmServerLoadBalancerDns",
    ]);
    expect(json.output?.CrmServerFrontendUrl.value).toBe("https://crm.example.com");
  });

  it("refuses the user-data secrets mode, naming the setting and why", () => {
    expect(() => exampleStackSettings({ topology: "scale-out" })).toThrow(
      /secrets.*"parameter-store" with "topology": "scale-out" \(a launch template's user data is copied to every host/,
    );
  });
});

const EXAMPLE_FILES = [
  join(__dirname, "..", "settings", "example.json"),
  ...readdirSync(join(__dirname, "..", "examples"))
    .filter((name) => name.endsWith(".json"))
    .map((name) => join(__dirname, "..", "examples", name)),
];

describe("every example stack's security groups", () => {
  const files = EXAMPLE_FILES;

  it.each(files)(
    "%s: every group and rule description is in EC2's character set (CreateSecurityGroup refuses others)",
    (file) => {
      const json = JSON.parse(Testing.synth(new CrmHostStack(Testing.app(), loadStackSettings(file))));
      const groups = Object.values(json.resource.aws_security_group ?? {}) as {
        description: string;
        ingress: { description: string }[];
        egress: { description: string }[];
      }[];
      expect(groups.length).toBeGreaterThan(0);
      const descriptions = groups.flatMap((group) => [
        group.description,
        ...group.ingress.map((r) => r.description),
        ...group.egress.map((r) => r.description),
      ]);
      expect(descriptions.filter((text) => !EC2_DESCRIPTION.test(text))).toEqual([]);
    },
  );
});

/** The constructs that declare Terraform variables: each topology's variables are theirs, as a module's are its variables.tf's. */
const VARIABLES_CONSTRUCTS = [
  DeploymentVariables,
  SecretVariables,
  BootstrapVariables,
  SubnetVariables,
  HostSizingVariables,
  DataVolumeVariables,
  ScaleOutVariables,
];

describe("every example stack's Terraform variables", () => {
  it.each(EXAMPLE_FILES)(
    "%s: each is declared by a variables construct, and those are built at the stack's root",
    (file) => {
      const stack = new CrmHostStack(Testing.app(), loadStackSettings(file));
      const nodes = stack.node.findAll();
      const holders = nodes.filter((node) => VARIABLES_CONSTRUCTS.some((type) => node instanceof type));
      expect(holders.filter((holder) => holder.node.scope !== stack).map((holder) => holder.node.path)).toEqual([]);
      const declared = new Set(
        holders.flatMap((holder) => Object.values(holder).filter((value) => value instanceof TerraformVariable)),
      );
      const variables = nodes.filter((node): node is TerraformVariable => node instanceof TerraformVariable);
      expect(variables.length).toBeGreaterThan(15);
      // A construct that declares its own variable (stackVariable puts every one at the stack's root) fails here.
      expect(
        variables.filter((variable) => !declared.has(variable)).map((variable) => variable.friendlyUniqueId),
      ).toEqual([]);
    },
  );
});
