import { ScaleOutOutputs } from "../../constructs/scale-out-outputs";
import { synthesize } from "../support/synth";

const PROPS = {
  instanceName: "CrmServer",
  nameTag: "S/CrmServer",
  loadBalancerDns: "${aws_lb.crm_load_balancer.dns_name}",
  databaseEndpoint: "${aws_db_instance.crm_database.endpoint}",
  databaseSecretArn: "${aws_db_instance.crm_database.master_user_secret[0].secret_arn}",
  autoScalingGroupName: "${aws_autoscaling_group.crm_hosts.name}",
};

describe("ScaleOutOutputs", () => {
  it("names the load balancer, the URLs on its name, the database's endpoint and secret, and the group, as <instance_name><What>", () => {
    const outputs = synthesize((scope) => new ScaleOutOutputs(scope, "outputs", PROPS)).json.output ?? {};
    expect(Object.fromEntries(Object.entries(outputs).map(([name, output]) => [name, output.value]))).toEqual({
      CrmServerLoadBalancerDns: "${aws_lb.crm_load_balancer.dns_name}",
      CrmServerFrontendUrl: "http://${aws_lb.crm_load_balancer.dns_name}",
      CrmServerBackendUrl: "http://${aws_lb.crm_load_balancer.dns_name}:3000",
      CrmServerDatabaseEndpoint: "${aws_db_instance.crm_database.endpoint}",
      CrmServerDatabaseSecretArn: "${aws_db_instance.crm_database.master_user_secret[0].secret_arn}",
      CrmServerAutoScalingGroupName: "${aws_autoscaling_group.crm_hosts.name}",
    });
    for (const output of Object.values(outputs)) expect(output.description).toEqual(expect.any(String));
    expect(outputs).not.toHaveProperty("CrmServerPublicIP");
  });

  it("with a domain, the URLs are on the domain: HTTPS for the front end", () => {
    const outputs =
      synthesize((scope) => new ScaleOutOutputs(scope, "outputs", { ...PROPS, domainName: "crm.example.com" })).json
        .output ?? {};
    expect([outputs.CrmServerFrontendUrl.value, outputs.CrmServerBackendUrl.value]).toEqual([
      "https://crm.example.com",
      "http://crm.example.com:3000",
    ]);
    expect(outputs.CrmServerFrontendUrl.description).toContain("HTTPS");
  });
});
