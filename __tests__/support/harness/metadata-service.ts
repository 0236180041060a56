/**
 * The provisioning harness's stand-in for the EC2 instance metadata service (IMDSv2) on loopback: a
 * token only for the TTL header, the instance's facts only for that token, the instance role's
 * credentials (which the AWS CLI of the Parameter Store mode takes) and the user data. It records
 * every request; the fault `step_10_read_public_hostname` makes it fail the public addresses (the Region, which the
 * first boot reads before step 1 for its modules, still answers).
 */
import { randomBytes } from "crypto";
import * as http from "http";
import { Fault } from "./faults";
import { close, listen, RecordedRequest } from "./shared";

/** Hostname and public IPv4 address the stand-in metadata service reports (until a test changes them). */
export const TEST_PUBLIC_HOSTNAME = "ec2-203-0-113-25.compute-1.amazonaws.com";
export const TEST_PUBLIC_IP = "203.0.113.25";
/** The instance id and Region the stand-in metadata service reports. */
export const TEST_INSTANCE_ID = "i-0123456789abcdef0";
export const TEST_REGION = "us-east-1";
/** Name of the role whose credentials the metadata stand-in serves. */
export const TEST_ROLE_NAME = "CrmHostStack-crm-host-role";
/** The role's temporary credentials it serves (moto takes any; a signature-checking proxy needs the secret). */
export const TEST_ROLE_CREDENTIALS = {
  accessKeyId: "ASIAMOTOTESTROLE0001",
  secretAccessKey: "moto-test-secret-access-key",
  sessionToken: "moto-test-session-token",
} as const;

/** TTL the stand-in metadata service insists on. */
const REQUIRED_TTL = "21600";

export class MetadataService {
  /** Requests received, in order. */
  readonly requests: RecordedRequest[] = [];
  /** What it reports as public-hostname and public-ipv4 (an Elastic IP's association changes both). */
  publicHostname = TEST_PUBLIC_HOSTNAME;
  publicIpv4 = TEST_PUBLIC_IP;
  /** The user data it serves (`/latest/user-data`); 404 while there is none. */
  userData?: Buffer;
  private readonly token = `imds-${randomBytes(12).toString("hex")}`;
  private server?: http.Server;
  private port = 0;

  /** `fault`: the fault the test armed, read at each request. */
  constructor(private readonly fault: () => Fault | undefined) {}

  /** The endpoint, as the settings' metadataEndpoint (no trailing slash). */
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      const answer = (status: number, body: string) => {
        this.requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, status });
        res.writeHead(status, { "Content-Type": "text/plain" }).end(body);
      };
      if (req.url === "/latest/api/token") {
        if (req.method !== "PUT") return answer(405, "");
        if (req.headers["x-aws-ec2-metadata-token-ttl-seconds"] !== REQUIRED_TTL) return answer(400, "");
        return answer(200, this.token);
      }
      if (req.method === "GET" && req.headers["x-aws-ec2-metadata-token"] !== this.token) return answer(401, "");
      if (this.fault() === "step_10_read_public_hostname" && /^\/latest\/meta-data\/public-/.test(req.url ?? ""))
        return answer(500, "");
      const meta = {
        "/latest/meta-data/public-hostname": this.publicHostname,
        "/latest/meta-data/public-ipv4": this.publicIpv4,
        "/latest/meta-data/instance-id": TEST_INSTANCE_ID,
        "/latest/meta-data/placement/region": TEST_REGION,
      }[req.url ?? ""];
      if (meta !== undefined && req.method === "GET") return answer(200, meta);
      // The instance role's credentials, as EC2 serves them (moto takes any).
      const credentials = "/latest/meta-data/iam/security-credentials/";
      if (req.url === credentials && req.method === "GET") return answer(200, TEST_ROLE_NAME);
      if (req.url === `${credentials}${TEST_ROLE_NAME}` && req.method === "GET") {
        return answer(
          200,
          JSON.stringify({
            Code: "Success",
            LastUpdated: new Date().toISOString(),
            Type: "AWS-HMAC",
            AccessKeyId: TEST_ROLE_CREDENTIALS.accessKeyId,
            SecretAccessKey: TEST_ROLE_CREDENTIALS.secretAccessKey,
            Token: TEST_ROLE_CREDENTIALS.sessionToken,
            Expiration: new Date(Date.now() + 6 * 3600_000).toISOString(),
          }),
        );
      }
      if (req.url === "/latest/user-data" && req.method === "GET") {
        if (req.headers["x-aws-ec2-metadata-token"] !== this.token) return answer(401, "");
        if (!this.userData) return answer(404, "");
        this.requests.push({ method: req.method, path: req.url, headers: req.headers, status: 200 });
        res.writeHead(200, { "Content-Type": "application/octet-stream" }).end(this.userData);
        return;
      }
      return answer(404, "");
    });
    this.server = server;
    this.port = await listen(server);
  }

  /** No request recorded, and the address and hostname of the instance's launch (the user data stays). */
  reset(): void {
    this.requests.length = 0;
    this.publicHostname = TEST_PUBLIC_HOSTNAME;
    this.publicIpv4 = TEST_PUBLIC_IP;
  }

  async stop(): Promise<void> {
    if (this.server) await close(this.server);
  }
}
