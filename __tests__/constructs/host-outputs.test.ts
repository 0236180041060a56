import { HostOutputs } from "../../constructs/host-outputs";
import { APP_PORT, HTTP_PORT } from "../../settings/ports";
import { synthesize } from "../support/synth";

describe("HostOutputs", () => {
  const { json } = synthesize(
    (scope) =>
      new HostOutputs(scope, "outputs", {
        instanceName: "Web",
        nameTag: "Stack/Web",
        instanceId: "${aws_instance.host.id}",
        publicIp: "${aws_instance.host.public_ip}",
        publicDns: "${aws_instance.host.public_dns}",
        loginUser: "ec2-user",
        provisioningLog: "/var/log/crm-provisioning.log",
      }),
  );

  it("names every output <instance_name><What>, not after the construct path", () => {
    expect(Object.keys(json.output ?? {}).sort()).toEqual([
      "WebBackendUrl",
      "WebFrontendUrl",
      "WebInstanceId",
      "WebProvisioningLogCommand",
      "WebPublicDns",
      "WebPublicIP",
      "WebSshCommand",
    ]);
  });

  it("gives the front-end and back-end addresses, and the commands to log in and follow the first boot", () => {
    const value = (name: string) => json.output?.[name].value;
    expect([HTTP_PORT, APP_PORT]).toEqual([80, 3000]);
    expect(value("WebPublicIP")).toBe("${aws_instance.host.public_ip}");
    expect(value("WebPublicDns")).toBe("${aws_instance.host.public_dns}");
    expect(value("WebInstanceId")).toBe("${aws_instance.host.id}");
    expect(value("WebFrontendUrl")).toBe("http://${aws_instance.host.public_dns}");
    expect(value("WebBackendUrl")).toBe("http://${aws_instance.host.public_dns}:3000");
    expect(value("WebSshCommand")).toBe("ssh ec2-user@${aws_instance.host.public_dns}");
    expect(value("WebProvisioningLogCommand")).toBe(
      "ssh ec2-user@${aws_instance.host.public_dns} sudo tail -n +1 -f /var/log/crm-provisioning.log",
    );
    expect(json.output?.WebPublicIP.description).toBe("Public IP address of Stack/Web");
  });

  it("puts the URLs on the domain's name with a domain: HTTPS for the front end, the back end on 3000", () => {
    const withDomain = synthesize(
      (scope) =>
        new HostOutputs(scope, "outputs", {
          instanceName: "Web",
          nameTag: "Stack/Web",
          instanceId: "i",
          publicIp: "ip",
          publicDns: "${aws_eip.crm_host.public_dns}",
          loginUser: "ec2-user",
          provisioningLog: "/log",
          domainName: "crm.example.com",
        }),
    ).json;
    expect(withDomain.output?.WebFrontendUrl).toMatchObject({
      value: "https://crm.example.com",
      description: expect.stringContaining("HTTPS"),
    });
    expect(withDomain.output?.WebBackendUrl.value).toBe("http://crm.example.com:3000");
    expect(withDomain.output?.WebSshCommand.value).toBe("ssh ec2-user@${aws_eip.crm_host.public_dns}");
  });

  it("adds <instance_name>DataVolumeId when given the data volume's id", () => {
    const withVolume = synthesize(
      (scope) =>
        new HostOutputs(scope, "outputs", {
          instanceName: "Web",
          nameTag: "Stack/Web",
          instanceId: "i",
          publicIp: "ip",
          publicDns: "dns",
          loginUser: "ec2-user",
          provisioningLog: "/log",
          dataVolumeId: "${aws_ebs_volume.data.id}",
        }),
    ).json;
    expect(withVolume.output?.WebDataVolumeId).toMatchObject({ value: "${aws_ebs_volume.data.id}" });
    expect(json.output?.WebDataVolumeId).toBeUndefined();
  });
});
