/**
 * Constants that several constructs share, in one place so that no construct borrows them from a
 * sibling: the instance type and root volume of the hosts, the IAM policy language, the ingress rules'
 * ports with their descriptions, and the account's quota of inbound rules.
 */
import { APP_PORT, HTTP_PORT, HTTPS_PORT, SSH_PORT } from "../settings/ports";

/** InstanceType of the original stack (docs/original-stack.md §2.1, §8). */
export const INSTANCE_TYPE = "t3.micro";

/** The shape of an EC2 instance type (family, generation and options, a dot, the size): t3.micro, m7i-flex.large. */
export const INSTANCE_TYPE_PATTERN = "^[a-z][a-z0-9-]*[.][a-z0-9]+$";
/** What a refused instance type is told. */
export const INSTANCE_TYPE_EXPECTED = "an EC2 instance type such as t3.micro or m7i.large";

/** Largest gp3 volume (EC2 CreateVolume API reference: gp3 1 - 65,536 GiB). */
export const MAX_GP3_SIZE_GIB = 65_536;

/**
 * Size of the root volume, in GiB (the AMI's snapshot is 8 GiB). It holds the OS after the full
 * update, the Development Tools group, MariaDB's binaries, the 2 GiB swap file, nvm with Node.js
 * 21.7.3, the app with its node_modules and yarn's cache, and the journal (up to 10% of the file
 * system); the database lives on the data volume. The estimate in docs/architecture.md comes too close
 * to 8 GiB for unattended updates, so twice that.
 */
export const ROOT_VOLUME_SIZE_GIB = 16;

/** Version of the IAM policy language (docs/original-stack.md §9). */
export const POLICY_VERSION = "2012-10-17";

/** Ports of docs/original-stack.md §2.2 and §8, with the description each ingress rule carries. */
export const SSH_RULE = { port: SSH_PORT, description: "SSH" } as const;
export const BACK_END_RULE = { port: APP_PORT, description: "application back end" } as const;
export const HTTP_RULE = { port: HTTP_PORT, description: "HTTP" } as const;
/** Opened only for a stack with a domain, to the same sources as the front and back end. */
export const HTTPS_RULE = { port: HTTPS_PORT, description: "HTTPS" } as const;

/** AWS's default quota "Inbound or outbound rules per security group", and the most any account can have (with one group per interface). */
export const DEFAULT_INBOUND_RULE_QUOTA = 60;
export const MAX_INBOUND_RULE_QUOTA = 1000;

/** What the refusal of too many inbound rules names: the variables of the CIDR lists, and of the quota. */
export interface InboundRuleNames {
  readonly cidrs: string;
  readonly quota: string;
}

/** Longest secret accepted; far above any real password or token, far below the 16 KiB user-data limit. */
export const MAX_SECRET_LENGTH = 256;
