/**
 * Data Lifecycle Manager, which moto lacks (__tests__/engine/moto-gaps.json), as a small HTTP server on
 * loopback for a test that deploys a stack as written: the provider reaches it through its per-service
 * endpoint variable (AWS_ENDPOINT_URL_DLM), everything else goes to moto. It keeps each policy as the
 * provider sent it (the REST-JSON API's create, get, update, delete and tags), in memory, and records
 * every request, so that a test can show what the provider asked of it. Nothing is checked of a policy's
 * contents: the construct test and the checkov scan do that.
 */
import { createServer, IncomingMessage, Server } from "http";
import { AddressInfo } from "net";

/** A running stand-in. */
export class DlmStandIn {
  /** Each request, as `<method> <path>`. */
  public readonly requests: string[] = [];
  private readonly policies = new Map<string, Record<string, unknown>>();

  private constructor(private readonly server: Server) {}

  /** Starts on a free loopback port. */
  public static async start(region: string): Promise<DlmStandIn> {
    const server = createServer((request, response) => {
      void standIn.answer(request, region).then(([status, body]) => {
        response.writeHead(status, { "content-type": "application/json" });
        response.end(JSON.stringify(body));
      });
    });
    const standIn = new DlmStandIn(server);
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    return standIn;
  }

  public get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The policies it holds now. */
  public get held(): Record<string, unknown>[] {
    return [...this.policies.values()];
  }

  public stop(): Promise<void> {
    return new Promise((done) => this.server.close(() => done()));
  }

  private async answer(request: IncomingMessage, region: string): Promise<[number, unknown]> {
    let text = "";
    for await (const chunk of request) text += chunk;
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    const url = new URL(request.url ?? "/", "http://stand-in");
    this.requests.push(`${request.method} ${url.pathname}`);
    const [, kind, rawId = ""] = url.pathname.split("/");
    const id = decodeURIComponent(rawId);
    if (kind === "policies" && request.method === "POST" && !id) {
      const policyId = `policy-${(this.policies.size + 1).toString(16).padStart(17, "0")}`;
      // The API's timestamps are ISO 8601 strings (the provider's SDK refuses numbers).
      const now = new Date().toISOString();
      this.policies.set(policyId, {
        ...body,
        PolicyId: policyId,
        DateCreated: now,
        DateModified: now,
        PolicyArn: `arn:aws:dlm:${region}:123456789012:policy/${policyId}`,
        Tags: body.Tags ?? {},
      });
      return [200, { PolicyId: policyId }];
    }
    if (kind === "policies" && id) {
      const policy = this.policies.get(id);
      if (!policy) return [404, { message: `policy ${id} not found`, code: "ResourceNotFoundException" }];
      if (request.method === "GET") return [200, { Policy: policy }];
      if (request.method === "PATCH") {
        this.policies.set(id, { ...policy, ...body, DateModified: new Date().toISOString() });
        return [200, {}];
      }
      if (request.method === "DELETE") {
        this.policies.delete(id);
        return [200, {}];
      }
    }
    if (kind === "tags" && id) {
      const policy = [...this.policies.values()].find((p) => p.PolicyArn === id);
      if (!policy) return [404, { message: `resource ${id} not found`, code: "ResourceNotFoundException" }];
      const tags = policy.Tags as Record<string, string>;
      if (request.method === "GET") return [200, { Tags: tags }];
      if (request.method === "POST") Object.assign(tags, body.Tags);
      if (request.method === "DELETE") for (const key of url.searchParams.getAll("tagKeys")) delete tags[key];
      return [200, {}];
    }
    return [
      400,
      { message: `the DLM stand-in has no ${request.method} ${url.pathname}`, code: "InvalidRequestException" },
    ];
  }
}
