import { Instance } from "@cdktf/provider-aws/lib/instance";
import { IamRole } from "@cdktf/provider-aws/lib/iam-role";
import { TerraformVariable } from "cdktf";
import { CrmInstance, CrmInstanceProps } from "../../constructs/crm-instance";
import { ROOT_VOLUME_SIZE_GIB } from "../../constructs/constants";
import { only, synthesize } from "../support/synth";

const props: CrmInstanceProps = {
  imageId: "ami-0123456789abcdef0",
  subnetId: "subnet-0123456789abcdef0",
  availabilityZone: "us-east-1a",
  securityGroupIds: ["sg-0123456789abcdef0"],
  keyName: "crm-admin",
  instanceProfileName: "crm-profile",
  userDataBase64: "IyEvYmluL2Jhc2gK",
  nameTag: "CrmHostStack/CrmServer",
};

describe("CrmInstance", () => {
  it("sets every field of the original stack's instance", () => {
    const { text } = synthesize((scope) => new CrmInstance(scope, "host", props));
    expect(text).toHaveResourceWithProperties(Instance, {
      ami: "ami-0123456789abcdef0",
      instance_type: "t3.micro",
      availability_zone: "us-east-1a",
      subnet_id: "subnet-0123456789abcdef0",
      vpc_security_group_ids: ["sg-0123456789abcdef0"],
      key_name: "crm-admin",
      iam_instance_profile: "crm-profile",
      user_data_base64: "IyEvYmluL2Jhc2gK",
      tags: { Name: "CrmHostStack/CrmServer" },
    });
  });

  it("enables the metadata service's IPv6 address only when asked (a script that reads it at [fd00:ec2::254])", () => {
    const ipv6 = only(
      synthesize((scope) => new CrmInstance(scope, "host", { ...props, metadataIpv6: true })).json.resource,
      "aws_instance",
    );
    expect(ipv6.metadata_options).toEqual({
      http_endpoint: "enabled",
      http_tokens: "required",
      http_protocol_ipv6: "enabled",
      http_put_response_hop_limit: 1,
    });
  });

  it("requires IMDSv2 tokens, encrypts a 16 GiB root volume and is EBS-optimized without detailed monitoring", () => {
    const { json } = synthesize((scope) => new CrmInstance(scope, "host", props));
    const instance = only(json.resource, "aws_instance");
    expect(instance.metadata_options).toEqual({
      http_endpoint: "enabled",
      http_tokens: "required",
      http_put_response_hop_limit: 1,
    });
    expect(ROOT_VOLUME_SIZE_GIB).toBe(16);
    expect(instance.root_block_device).toEqual({
      encrypted: true,
      volume_type: "gp3",
      volume_size: 16,
      delete_on_termination: true,
    });
    expect(instance.ebs_optimized).toBe(true);
    expect(instance.monitoring).toBe(false);
    expect(instance.depends_on).toBeUndefined();
  });

  it("is never replaced or restarted by a new image or new user data: Terraform ignores both after creation", () => {
    const { json } = synthesize((scope) => new CrmInstance(scope, "host", props));
    expect(only(json.resource, "aws_instance").lifecycle).toEqual({
      ignore_changes: ["ami", "user_data", "user_data_base64"],
    });
  });

  it("has termination protection, standard CPU credits and a public IP address whatever the subnet's default", () => {
    const instance = only(synthesize((scope) => new CrmInstance(scope, "host", props)).json.resource, "aws_instance");
    expect(instance.disable_api_termination).toBe(true);
    expect(instance.credit_specification).toEqual({ cpu_credits: "standard" });
    expect(instance.associate_public_ip_address).toBe(true);
  });

  it("leaves automatic recovery to EC2's default (on), which needs no update call", () => {
    const { json } = synthesize((scope) => new CrmInstance(scope, "host", props));
    expect(only(json.resource, "aws_instance").maintenance_options).toBeUndefined();
  });

  it("takes detailed monitoring from a Terraform expression such as a variable", () => {
    const { json } = synthesize((scope) => {
      const monitoring = new TerraformVariable(scope, "detailed_monitoring", { type: "bool", default: false });
      new CrmInstance(scope, "host", { ...props, detailedMonitoring: monitoring.booleanValue });
    });
    expect(only(json.resource, "aws_instance").monitoring).toBe("${var.detailed_monitoring}");
  });

  it("honours the documented overrides and waits for the given dependencies", () => {
    const { json } = synthesize((scope) => {
      const role = new IamRole(scope, "role", { assumeRolePolicy: "{}" });
      new CrmInstance(scope, "host", {
        ...props,
        instanceType: "t3.small",
        rootVolumeSizeGiB: 20,
        detailedMonitoring: true,
        dependsOn: [role],
      });
    });
    const instance = only(json.resource, "aws_instance");
    expect(instance.instance_type).toBe("t3.small");
    expect(instance.root_block_device.volume_size).toBe(20);
    expect(instance.monitoring).toBe(true);
    expect(instance.depends_on).toEqual(["aws_iam_role.role"]);
  });
});
