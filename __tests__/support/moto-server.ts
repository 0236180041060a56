/**
 * moto's server (PyPI `moto[server]`, installed by scripts/ci/install-tools.sh) as an S3 service
 * on loopback, on a free port, for the state backend test. It keeps everything in memory and
 * stops with the test.
 */
import { ChildProcess, spawn } from "child_process";
import { existsSync } from "fs";
import { request } from "http";
import { createServer } from "net";
import { delimiter, join } from "path";

/** Path of moto_server: on PATH (scripts/ci/env.sh) or in the tools' cache; undefined when missing. */
export function findMotoServer(): string | undefined {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  if (process.env.CRM_TOOLS_DIR) dirs.push(join(process.env.CRM_TOOLS_DIR, "bin"));
  for (const dir of dirs) {
    const candidate = join(dir, "moto_server");
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

export interface HttpResult {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A running moto server. */
export class MotoServer {
  private constructor(
    private readonly child: ChildProcess,
    public readonly port: number,
    private readonly log: string[],
  ) {}

  /** Starts moto on a free loopback port and waits (at most `timeoutMs`) until it answers; `env`: moto's settings (MOTO_…). */
  public static async start(binary: string, timeoutMs = 30_000, env: Record<string, string> = {}): Promise<MotoServer> {
    const port = await freePort();
    const log: string[] = [];
    const child = spawn(binary, ["-H", "127.0.0.1", "-p", String(port)], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PYTHONUNBUFFERED: "1", ...env },
    });
    child.stdout?.on("data", (chunk) => log.push(String(chunk)));
    child.stderr?.on("data", (chunk) => log.push(String(chunk)));
    const server = new MotoServer(child, port, log);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}:\n${log.join("")}`);
      try {
        await server.http("GET", "/moto-api/");
        return server;
      } catch {
        if (Date.now() > deadline) {
          await server.stop();
          throw new Error(`moto_server did not answer on port ${port} within ${timeoutMs} ms:\n${log.join("")}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  public get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** One HTTP request to the server, bounded to 10 s. */
  public http(method: string, path: string, body?: string): Promise<HttpResult> {
    // moto checks no signature, but treats a request without credentials as anonymous (403 on
    // private objects): name the test's access key with a dummy signature.
    const authorization =
      "AWS4-HMAC-SHA256 Credential=moto-test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0";
    return new Promise((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port: this.port, method, path, timeout: 10_000, headers: { authorization } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
      req.on("error", reject);
      req.end(body);
    });
  }

  /** What the server logged (requests), for failure messages. */
  public output(): string {
    return this.log.join("");
  }

  /** Stops the server and waits (at most 5 s, then SIGKILL) until it has exited. */
  public async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

/** A TCP port that was free on loopback a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
