import { Lb } from "@cdktf/provider-aws/lib/lb";
import { LbListener } from "@cdktf/provider-aws/lib/lb-listener";
import { LbTargetGroup } from "@cdktf/provider-aws/lib/lb-target-group";
import { Construct } from "constructs";
import { APP_PORT, HTTP_PORT, HTTPS_PORT } from "../settings/ports";
import { nameElements } from "./addresses";

/** TLS policy of the HTTPS listener: TLS 1.3 and 1.2 with forward secrecy, AWS's recommendation for new listeners. */
export const HTTPS_SSL_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06";

/**
 * The target group's health check: the ops command's rule (a status below 500 on healthCheckPath), asked every
 * 15 s; two answers make a host healthy, three failures unhealthy (then the Auto Scaling group replaces it).
 */
export const TARGET_HEALTH_CHECK = {
  matcher: "200-499",
  interval: 15,
  timeout: 5,
  healthyThreshold: 2,
  unhealthyThreshold: 3,
} as const;
/**
 * Seconds the load balancer waits for an answer's next byte before it gives up on the request (504): AWS's
 * default, set here so that DEREGISTRATION_DELAY_SECONDS follows it.
 */
export const IDLE_TIMEOUT_SECONDS = 60;
/**
 * Seconds the load balancer lets a leaving host (an instance refresh's old ones) finish its requests in flight:
 * the longest a request can take through the load balancer without sending a byte (IDLE_TIMEOUT_SECONDS), so that
 * no request it would have let finish is cut. A host with nothing in flight leaves at once (docs/scale-out.md).
 */
export const DEREGISTRATION_DELAY_SECONDS = IDLE_TIMEOUT_SECONDS;

/** Props of {@link ApplicationLoadBalancer}. */
export interface ApplicationLoadBalancerProps {
  /** Its subnets: two or more zones, public. */
  readonly subnetIds: string[];
  /** Its security groups (the load balancer tier's). */
  readonly securityGroupIds: string[];
  /** The VPC of the hosts (the target group's). */
  readonly vpcId: string;
  /** Path the health check asks on the hosts' port 3000 (the settings' healthCheckPath). */
  readonly healthCheckPath: string;
  /**
   * The ACM certificate of the site's name: HTTPS on 443 with it, and port 80 redirected there.
   * @default - no HTTPS: port 80 forwards to the hosts as the original stack's front end
   */
  readonly certificateArn?: string;
  /** Value of the Name tag. */
  readonly nameTag: string;
  /**
   * Terraform name of the load balancer and its listeners (`aws_lb.<name>`, `aws_lb_listener.<name>_front_end`,
   * `…_back_end`, `…_https`); the target group is `aws_lb_target_group.<targetGroupName>`.
   * @default "crm_load_balancer"
   */
  readonly name?: string;
  /** @default "crm_hosts" */
  readonly targetGroupName?: string;
}

/**
 * The scale-out topology's front door: an internet-facing Application Load Balancer that answers the
 * spec's ports, 80 (front end) and 3000 (back end), and forwards both to the hosts' port 3000 in one
 * target group, which health-checks them as the ops command does; with a certificate, HTTPS on 443 and
 * port 80 redirected to it (the back end stays on 3000, as the original stack has it). Invalid header fields are
 * dropped. Inputs modelled on terraform-aws-modules/alb (internal, drop_invalid_header_fields, listeners
 * with forward and redirect actions, target group health_check and deregistration_delay).
 */
export class ApplicationLoadBalancer extends Construct {
  public readonly loadBalancer: Lb;
  public readonly targetGroup: LbTargetGroup;
  public readonly listeners: LbListener[];

  constructor(scope: Construct, id: string, props: ApplicationLoadBalancerProps) {
    super(scope, id);
    const name = props.name ?? "crm_load_balancer";
    this.loadBalancer = new Lb(this, "load_balancer", {
      loadBalancerType: "application",
      internal: false,
      ipAddressType: "ipv4",
      subnets: props.subnetIds,
      securityGroups: props.securityGroupIds,
      dropInvalidHeaderFields: true,
      idleTimeout: IDLE_TIMEOUT_SECONDS,
      tags: { Name: props.nameTag },
    });
    nameElements(name, this.loadBalancer);
    this.targetGroup = new LbTargetGroup(this, "target_group", {
      targetType: "instance",
      port: APP_PORT,
      protocol: "HTTP",
      vpcId: props.vpcId,
      deregistrationDelay: String(DEREGISTRATION_DELAY_SECONDS),
      healthCheck: {
        enabled: true,
        protocol: "HTTP",
        port: "traffic-port",
        path: props.healthCheckPath,
        ...TARGET_HEALTH_CHECK,
      },
      tags: { Name: props.nameTag },
    });
    nameElements(props.targetGroupName ?? "crm_hosts", this.targetGroup);
    const forward = [{ type: "forward", targetGroupArn: this.targetGroup.arn }];
    const listener = (what: string, port: number, options: Partial<ConstructorParameters<typeof LbListener>[2]>) => {
      const made = new LbListener(this, what, {
        loadBalancerArn: this.loadBalancer.arn,
        port,
        protocol: "HTTP",
        defaultAction: forward,
        ...options,
      });
      nameElements(`${name}_${what}`, made);
      return made;
    };
    this.listeners = [
      listener(
        "front_end",
        HTTP_PORT,
        props.certificateArn === undefined
          ? {}
          : {
              defaultAction: [
                { type: "redirect", redirect: { port: String(HTTPS_PORT), protocol: "HTTPS", statusCode: "HTTP_301" } },
              ],
            },
      ),
      listener("back_end", APP_PORT, {}),
      ...(props.certificateArn === undefined
        ? []
        : [
            listener("https", HTTPS_PORT, {
              protocol: "HTTPS",
              sslPolicy: HTTPS_SSL_POLICY,
              certificateArn: props.certificateArn,
            }),
          ]),
    ];
  }

  /** The load balancer's DNS name, and its hosted zone (for an alias record). */
  public get dnsName(): string {
    return this.loadBalancer.dnsName;
  }

  public get zoneId(): string {
    return this.loadBalancer.zoneId;
  }
}
