/**
 * AWS's check of a request's Signature Version 4, which moto's server skips (it takes any signature): the
 * signature is computed again with the secret of the request's key id (@smithy/signature-v4, the AWS SDK's
 * signer) over what the request says it signed (its SignedHeaders, path, query and body), and compared.
 * A stand-in that puts it in front of moto refuses what AWS would refuse, so that a host's hand-made call
 * (curl --aws-sigv4) is proven signed as AWS checks it, not only accepted.
 */
import { SignatureV4 } from "@smithy/signature-v4";
import { createHash, createHmac, Hash, Hmac } from "crypto";
import * as http from "http";
import { close, listen } from "./harness/shared";

type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: SourceData): string | Uint8Array =>
  typeof data === "string"
    ? data
    : data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** The SHA-256 (or HMAC-SHA-256 with a secret) the signer takes, from Node's crypto. */
class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
  reset(): void {
    throw new Error("not used by the signer");
  }
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** The request as it came: method, URL (path and query), headers as Node gives them, body. */
export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * Why AWS would refuse the request's signature, or undefined when it holds: no or a malformed
 * Authorization header, a key id that `secrets` does not know, a signed header missing, a signature that
 * differs from the one computed again.
 */
export async function signatureProblem(
  req: ReceivedRequest,
  secrets: Readonly<Record<string, string>>,
): Promise<string | undefined> {
  const authorization = req.headers.authorization ?? "";
  const parts = AUTHORIZATION.exec(authorization);
  if (!parts) return `no SigV4 Authorization header (${authorization ? "malformed" : "none"})`;
  const [, keyId, day, region, service, signedHeaders, signature] = parts;
  const secret = secrets[keyId];
  if (secret === undefined) return `unknown access key id ${keyId}`;
  const amzDate = req.headers["x-amz-date"];
  if (typeof amzDate !== "string" || !/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== day)
    return `x-amz-date ${String(amzDate)} does not match the credential's day ${day}`;
  const headers: Record<string, string> = {};
  for (const name of signedHeaders.split(";")) {
    const value = req.headers[name];
    if (value === undefined) return `signed header ${name} is missing`;
    headers[name] = Array.isArray(value) ? value.join(",") : value;
  }
  const url = new URL(req.url, "http://signed.invalid");
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? values[0] : values;
  }
  const signer = new SignatureV4({
    service,
    region,
    credentials: { accessKeyId: keyId, secretAccessKey: secret },
    sha256: NodeSha256,
    applyChecksum: false,
  });
  const signingDate = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const signed = await signer.sign(
    {
      method: req.method,
      protocol: "https:",
      hostname: headers.host ?? "",
      path: url.pathname,
      query,
      headers,
      body: req.body,
    },
    { signingDate },
  );
  const expected = AUTHORIZATION.exec(String(signed.headers.authorization ?? ""));
  if (!expected || expected[5] !== signedHeaders)
    return `the signer signs ${expected?.[5]} where the request says ${signedHeaders}`;
  return expected[6] === signature ? undefined : `SignatureDoesNotMatch (${service} ${req.method} ${url.pathname})`;
}

/**
 * An HTTP server on loopback in front of another (moto's): each request's signature is checked first; one that
 * AWS would refuse gets 403 SignatureDoesNotMatch (as AWS answers) and is recorded in `refused`, the others are
 * passed on as they came.
 */
export class SignatureCheckingProxy {
  /** The refused requests: why, in order. */
  readonly refused: string[] = [];
  /** How many requests passed the check. */
  passed = 0;
  private server?: http.Server;
  private port = 0;

  constructor(
    private readonly upstreamPort: number,
    private readonly secrets: Readonly<Record<string, string>>,
  ) {}

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.port = await listen(this.server);
  }

  /** Answers `req`, read whole (the signature covers the body): passed on when its signature holds, else 403. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void this.forward(
        { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks) },
        res,
      );
    });
  }

  private async forward(received: ReceivedRequest, res: http.ServerResponse): Promise<void> {
    const problem = await signatureProblem(received, this.secrets);
    if (problem) {
      this.refused.push(problem);
      const body = JSON.stringify({ __type: "SignatureDoesNotMatch", message: problem });
      res.writeHead(403, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }).end(body);
      return;
    }
    this.passed++;
    const upstream = http.request(
      {
        host: "127.0.0.1",
        port: this.upstreamPort,
        method: received.method,
        path: received.url,
        headers: received.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end("the upstream server did not answer\n"));
    upstream.end(received.body);
  }

  async stop(): Promise<void> {
    if (this.server) await close(this.server);
  }
}
