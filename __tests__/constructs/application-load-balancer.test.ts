import {
  ApplicationLoadBalancer,
  DEREGISTRATION_DELAY_SECONDS,
  HTTPS_SSL_POLICY,
  IDLE_TIMEOUT_SECONDS,
} from "../../constructs/application-load-balancer";
import { only, synthesize } from "../support/synth";

const PROPS = {
  subnetIds: ["subnet-a", "subnet-b"],
  securityGroupIds: ["sg-lb"],
  vpcId: "vpc-1",
  healthCheckPath: "/health",
  nameTag: "S/W",
};

describe("ApplicationLoadBalancer", () => {
  const { json } = synthesize((scope) => new ApplicationLoadBalancer(scope, "load_balancer", PROPS));

  it("is an internet-facing ALB on the subnets, behind its security group, dropping invalid header fields", () => {
    expect(json.resource?.aws_lb).toEqual({
      crm_load_balancer: {
        load_balancer_type: "application",
        internal: false,
        ip_address_type: "ipv4",
        subnets: ["subnet-a", "subnet-b"],
        security_groups: ["sg-lb"],
        drop_invalid_header_fields: true,
        idle_timeout: IDLE_TIMEOUT_SECONDS,
        tags: { Name: "S/W" },
      },
    });
  });

  it("lets a leaving host finish every request the load balancer would let finish: the deregistration delay is its idle timeout", () => {
    expect([IDLE_TIMEOUT_SECONDS, DEREGISTRATION_DELAY_SECONDS]).toEqual([60, 60]);
    expect(only(json.resource, "aws_lb_target_group").deregistration_delay).toBe(String(IDLE_TIMEOUT_SECONDS));
  });

  it("sends to the hosts' port 3000 in one target group that health-checks them as the ops command does", () => {
    expect(json.resource?.aws_lb_target_group).toEqual({
      crm_hosts: {
        target_type: "instance",
        port: 3000,
        protocol: "HTTP",
        vpc_id: "vpc-1",
        deregistration_delay: String(DEREGISTRATION_DELAY_SECONDS),
        health_check: {
          enabled: true,
          protocol: "HTTP",
          port: "traffic-port",
          path: "/health",
          matcher: "200-499",
          interval: 15,
          timeout: 5,
          healthy_threshold: 2,
          unhealthy_threshold: 3,
        },
        tags: { Name: "S/W" },
      },
    });
  });

  it("answers the original stack's ports 80 and 3000 and forwards both to the hosts; HTTPS needs a certificate", () => {
    const forward = [{ type: "forward", target_group_arn: "${aws_lb_target_group.crm_hosts.arn}" }];
    expect(json.resource?.aws_lb_listener).toEqual({
      crm_load_balancer_front_end: {
        load_balancer_arn: "${aws_lb.crm_load_balancer.arn}",
        port: 80,
        protocol: "HTTP",
        default_action: forward,
      },
      crm_load_balancer_back_end: {
        load_balancer_arn: "${aws_lb.crm_load_balancer.arn}",
        port: 3000,
        protocol: "HTTP",
        default_action: forward,
      },
    });
  });

  it("with a certificate: HTTPS on 443 with a TLS 1.2+ policy, and 80 redirected to it; 3000 stays HTTP", () => {
    const { json: secure } = synthesize(
      (scope) => new ApplicationLoadBalancer(scope, "load_balancer", { ...PROPS, certificateArn: "arn:cert" }),
    );
    const listeners = secure.resource?.aws_lb_listener ?? {};
    expect(listeners.crm_load_balancer_https).toMatchObject({
      port: 443,
      protocol: "HTTPS",
      ssl_policy: HTTPS_SSL_POLICY,
      certificate_arn: "arn:cert",
    });
    expect(listeners.crm_load_balancer_front_end.default_action).toEqual([
      { type: "redirect", redirect: { port: "443", protocol: "HTTPS", status_code: "HTTP_301" } },
    ]);
    expect(listeners.crm_load_balancer_back_end).toMatchObject({ port: 3000, protocol: "HTTP" });
    expect(only(secure.resource, "aws_lb")).toBeDefined();
  });
});
