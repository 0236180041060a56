import { DlmLifecyclePolicy } from "@cdktf/provider-aws/lib/dlm-lifecycle-policy";
import { EbsVolume } from "@cdktf/provider-aws/lib/ebs-volume";
import { IamRole } from "@cdktf/provider-aws/lib/iam-role";
import { Instance } from "@cdktf/provider-aws/lib/instance";
import { SecurityGroup } from "@cdktf/provider-aws/lib/security-group";
import { VolumeAttachment } from "@cdktf/provider-aws/lib/volume-attachment";
import { TerraformOutput, TerraformVariable } from "cdktf";
import { exampleStackJson } from "../../scripts/docs";
import { architectureDiagram } from "../../scripts/docs/diagram";
import { blocksOf } from "../../scripts/docs/terraform-json";
import { synthesize } from "../support/synth";

/** The node id of the one block of a type in a diagram (fails unless there is exactly one). */
function nodeOf(diagram: string, type: string): string {
  const ids = [...diagram.matchAll(new RegExp(`^  (${type}_\\w+)\\[`, "gm"))].map((match) => match[1]);
  expect(ids).toHaveLength(1);
  return ids[0];
}

describe("architecture diagram", () => {
  const stack = exampleStackJson();
  const diagram = architectureDiagram(stack);

  it("is a Mermaid flowchart with a node for every resource and data source of the stack", () => {
    expect(diagram.split("\n")[0]).toBe("flowchart LR");
    for (const block of blocksOf(stack)) {
      expect(diagram).toContain(`  ${block.address.replace(/[^A-Za-z0-9_]/g, "_")}[`);
    }
    expect(architectureDiagram(stack)).toBe(diagram);
  });

  it("shows who may reach the security group on which ports, and where it may go", () => {
    const group = nodeOf(diagram, "aws_security_group");
    expect(diagram).toContain(`  var_ssh_ingress_cidrs -->|"ingress: tcp 22 (SSH)"| ${group}`);
    expect(diagram).toContain(
      `  var_app_ingress_cidrs -->|"ingress: tcp 80 (HTTP); tcp 3000 (application back end)"| ${group}`,
    );
    expect(diagram).toContain(`  var_ssh_ingress_cidrs(["var.ssh_ingress_cidrs<br/>default [#quot;0.0.0.0/0#quot;]"])`);
    expect(diagram).toMatch(
      new RegExp(`  ${group} -->\\|"egress: all protocols \\(all outbound traffic\\)"\\| cidr_0_0_0_0_0`),
    );
  });

  it("wires the instance to its profile, role, key pair, group and image parameter, and the output to its Elastic IP", () => {
    const instance = nodeOf(diagram, "aws_instance");
    const profile = nodeOf(diagram, "aws_iam_instance_profile");
    // The instance's role (the stack also has the snapshot service's role and its policy attachment).
    const role = "aws_iam_role_crm_host";
    expect(diagram).toContain(`  ${role} -->|"role"| ${profile}`);
    expect(diagram).toContain(`  ${profile} -->|"iam_instance_profile"| ${instance}`);
    expect(diagram).toContain(`  ${role} -.->|"depends_on"| ${instance}`);
    expect(diagram).toContain(`  ${nodeOf(diagram, "aws_key_pair")} -->|"key_name"| ${instance}`);
    expect(diagram).toMatch(new RegExp(`  data_aws_ssm_parameter_image -->\\|"ami"\\| ${instance}\\n`));
    expect(diagram).toContain("assumed by ec2.amazonaws.com");
    expect(diagram).toContain(
      "name: var.image_parameter = /aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-x86_64",
    );
    expect(diagram).toMatch(new RegExp(`  aws_eip_crm_host -->\\|"public_ip"\\| output_\\w+PublicIP($|\\n)`));
    expect(diagram).toContain(`  ${instance} -->|"instance_id"| aws_eip_association_crm_host`);
  });

  it("shows a data volume, its attachment and its snapshot policy as soon as a stack has them", () => {
    const { json } = synthesize((scope) => {
      const cidrs = new TerraformVariable(scope, "office_cidrs", {
        type: "list(string)",
        default: ["198.51.100.0/24"],
      });
      const group = new SecurityGroup(scope, "group", {
        ingress: [
          { protocol: "tcp", fromPort: 22, toPort: 22, cidrBlocks: cidrs.listValue },
          { protocol: "tcp", fromPort: 8000, toPort: 8080, cidrBlocks: ["203.0.113.0/24", "192.0.2.0/24"] },
        ],
      });
      const host = new Instance(scope, "host", {
        ami: "ami-1",
        instanceType: "t3.micro",
        vpcSecurityGroupIds: [group.id],
      });
      const volume = new EbsVolume(scope, "data", {
        availabilityZone: host.availabilityZone,
        size: 20,
        type: "gp3",
        encrypted: true,
        tags: { Backup: "crm-data" },
      });
      new VolumeAttachment(scope, "attach", { deviceName: "/dev/sdf", volumeId: volume.id, instanceId: host.id });
      const role = new IamRole(scope, "dlm_role", {
        assumeRolePolicy: JSON.stringify({ Statement: [{ Principal: { Service: "dlm.amazonaws.com" } }] }),
      });
      new DlmLifecyclePolicy(scope, "snapshots", {
        description: "daily",
        executionRoleArn: role.arn,
        state: "ENABLED",
        policyDetails: {
          resourceTypes: ["VOLUME"],
          targetTags: { Backup: "crm-data" },
          schedule: [{ name: "daily", createRule: { interval: 24 }, retainRule: { count: 7 } }],
        },
      });
      new TerraformOutput(scope, "volume_id", { value: volume.id, sensitive: true });
    });
    const extended = architectureDiagram(json);
    const volume = nodeOf(extended, "aws_ebs_volume");
    const attachment = nodeOf(extended, "aws_volume_attachment");
    const instance = nodeOf(extended, "aws_instance");
    const policy = nodeOf(extended, "aws_dlm_lifecycle_policy");
    expect(extended).toContain(`${volume}["aws_ebs_volume<br/>data<br/>type: gp3<br/>size: 20<br/>encrypted: true"]`);
    expect(extended).toContain(`  ${volume} -->|"volume_id"| ${attachment}`);
    expect(extended).toContain(`  ${instance} -->|"instance_id"| ${attachment}`);
    expect(extended).toContain(`  ${instance} -->|"availability_zone"| ${volume}`);
    expect(extended).toContain(`  ${nodeOf(extended, "aws_iam_role")} -->|"execution_role_arn"| ${policy}`);
    expect(extended).toContain(`  ${policy} -.->|"snapshots (target tags)"| ${volume}`);
    expect(extended).toContain("assumed by dlm.amazonaws.com");
    expect(extended).toContain(`  ${volume} -->|"id"| output_volume_id`);
    expect(extended).toContain(`output_volume_id[/"output volume_id (sensitive)"/]`);
    const group = nodeOf(extended, "aws_security_group");
    expect(extended).toContain(`  var_office_cidrs -->|"ingress: tcp 22"| ${group}`);
    expect(extended).toContain(`  cidr_203_0_113_0_24 -->|"ingress: tcp 8000-8080"| ${group}`);
    expect(extended).toContain(`  cidr_192_0_2_0_24(["192.0.2.0/24"])`);
  });
});
