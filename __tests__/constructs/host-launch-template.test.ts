import { TerraformOutput } from "cdktf";
import { HostLaunchTemplate } from "../../constructs/host-launch-template";
import { only, synthesize } from "../support/synth";

const PROPS = {
  imageId: "ami-1",
  rootDeviceName: "/dev/xvda",
  securityGroupIds: ["sg-hosts"],
  keyName: "key",
  instanceProfileName: "profile",
  userDataBase64: "IyEvYmluL2Jhc2g=",
  namePrefix: "S-W-",
  nameTag: "S/W",
};

describe("HostLaunchTemplate", () => {
  const { json } = synthesize((scope) => {
    const template = new HostLaunchTemplate(scope, "launch_template", PROPS);
    new TerraformOutput(scope, "version", { value: template.latestVersion });
  });
  const template = only(json.resource, "aws_launch_template");

  it("launches the image as a t3.micro with the instance profile, the key pair and the user data; each change is the new default version", () => {
    expect(json.resource?.aws_launch_template).toHaveProperty("crm_hosts");
    expect(template).toMatchObject({
      name_prefix: "S-W-",
      update_default_version: true,
      image_id: "ami-1",
      instance_type: "t3.micro",
      key_name: "key",
      iam_instance_profile: { name: "profile" },
      user_data: "IyEvYmluL2Jhc2g=",
      ebs_optimized: "true",
      credit_specification: { cpu_credits: "standard" },
      monitoring: { enabled: false },
      maintenance_options: { auto_recovery: "default" },
    });
    expect(json.output?.version.value).toBe("${aws_launch_template.crm_hosts.latest_version}");
  });

  it("holds its image as the single host does: a new AMI only by replacing the template, the new one made before the old goes", () => {
    expect(template.lifecycle).toEqual({ ignore_changes: ["image_id"], create_before_destroy: true });
  });

  it("requires IMDSv2 with one hop, as the single host", () => {
    expect(template.metadata_options).toEqual({
      http_endpoint: "enabled",
      http_tokens: "required",
      http_put_response_hop_limit: 1,
    });
    const { json: ipv6 } = synthesize((scope) => new HostLaunchTemplate(scope, "t", { ...PROPS, metadataIpv6: true }));
    expect(only(ipv6.resource, "aws_launch_template").metadata_options.http_protocol_ipv6).toBe("enabled");
  });

  it("puts the hosts' security group on a public interface and encrypts a gp3 root volume, tagging hosts and volumes", () => {
    expect(template.network_interfaces).toEqual([
      {
        device_index: 0,
        associate_public_ip_address: "true",
        delete_on_termination: "true",
        security_groups: ["sg-hosts"],
      },
    ]);
    expect(template.block_device_mappings).toEqual([
      {
        device_name: "/dev/xvda",
        ebs: { encrypted: "true", volume_type: "gp3", volume_size: 16, delete_on_termination: "true" },
      },
    ]);
    expect(template.tag_specifications).toEqual([
      { resource_type: "instance", tags: { Name: "S/W" } },
      { resource_type: "volume", tags: { Name: "S/W" } },
    ]);
  });

  it("adds the launchTags to what it launches, under the Name tag, and to nothing else", () => {
    const { json: tagged } = synthesize(
      (scope) =>
        new HostLaunchTemplate(scope, "launch_template", {
          ...PROPS,
          launchTags: { CostCenter: "crm-42", Name: "overridden" },
          rootVolumeSizeGiB: 30,
        }),
    );
    const other = only(tagged.resource, "aws_launch_template");
    const launched = { CostCenter: "crm-42", Name: "S/W" };
    expect(other.tag_specifications).toEqual([
      { resource_type: "instance", tags: launched },
      { resource_type: "volume", tags: launched },
    ]);
    expect(other.tags).toEqual({ Name: "S/W" });
    expect(other.block_device_mappings[0].ebs.volume_size).toBe(30);
  });
});
