/**
 * Pebble, Let's Encrypt's ACME test server (Debian's package), with pebble-challtestsrv as its DNS:
 * every name resolves to 127.0.0.1, where the boot test forwards the guest's ports 80 and 443, so
 * Pebble's HTTP-01 and TLS-ALPN-01 validations reach the guest's TLS server. Both run on free loopback
 * ports with their files in a private directory, and stop() ends them. Pebble makes a new root
 * certificate at every start: rootCertificate() is the only CA a client needs to trust its certificates.
 */
import { ChildProcess, spawn } from "child_process";
import { openSync, readFileSync, writeFileSync } from "fs";
import * as http from "http";
import * as https from "https";
import { join } from "path";
import { freePort, run } from "./vm";

/** Host names Pebble's own HTTPS certificate is for (besides 127.0.0.1): those a proxy may ask it as. */
export interface PebbleOptions {
  /** Private directory for the configuration, the listener's key and certificate, and the logs. */
  readonly dir: string;
  /** Loopback ports Pebble validates challenges on: the forwards of the guest's 80 (HTTP-01) and 443 (TLS-ALPN-01). */
  readonly httpPort: number;
  readonly tlsPort: number;
  /** Names Pebble's listener certificate is issued for, so that requests passed on with their Host verify. */
  readonly names: readonly string[];
}

async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`Pebble: no ${what} within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export class Pebble {
  static async start(options: PebbleOptions): Promise<Pebble> {
    const key = join(options.dir, "pebble.key");
    const cert = join(options.dir, "pebble.pem");
    const san = ["IP:127.0.0.1", "DNS:localhost", ...options.names.map((name) => `DNS:${name}`)].join(",");
    const made = await run("openssl", [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-subj",
      "/CN=pebble listener",
      "-keyout",
      key,
      "-out",
      cert,
      "-addext",
      `subjectAltName=${san}`,
    ]);
    if (made.code !== 0) throw new Error(`openssl failed: ${made.stderr}`);
    const [acmePort, managementPort, dnsPort, dnsManagementPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const config = join(options.dir, "pebble-config.json");
    writeFileSync(
      config,
      JSON.stringify({
        pebble: {
          listenAddress: `127.0.0.1:${acmePort}`,
          managementListenAddress: `127.0.0.1:${managementPort}`,
          certificate: cert,
          privateKey: key,
          httpPort: options.httpPort,
          tlsPort: options.tlsPort,
          ocspResponderURL: "",
          externalAccountBindingRequired: false,
        },
      }),
    );
    const log = (name: string) => openSync(join(options.dir, `${name}.log`), "a");
    const dns = spawn(
      "pebble-challtestsrv",
      [
        "-defaultIPv4",
        "127.0.0.1",
        "-defaultIPv6",
        "",
        "-dns01",
        `127.0.0.1:${dnsPort}`,
        "-http01",
        "",
        "-https01",
        "",
        "-tlsalpn01",
        "",
        "-management",
        `127.0.0.1:${dnsManagementPort}`,
      ],
      { stdio: ["ignore", log("challtestsrv"), log("challtestsrv")] },
    );
    // No sleep before validating, no refused nonces (Pebble's defaults test a client's retries, not ours).
    const pebble = spawn("pebble", ["-config", config, "-dnsserver", `127.0.0.1:${dnsPort}`], {
      stdio: ["ignore", log("pebble"), log("pebble")],
      env: { ...process.env, PEBBLE_VA_NOSLEEP: "1", PEBBLE_WFE_NONCEREJECT: "0" },
    });
    const server = new Pebble(acmePort, managementPort, readFileSync(cert), [dns, pebble], options.dir);
    try {
      await waitUntil("ACME directory", async () => (await server.get(acmePort, "/dir")).status === 200, 30_000);
      await waitUntil("DNS stand-in", async () => (await getHttp(dnsManagementPort)).status > 0, 30_000);
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  private constructor(
    readonly acmePort: number,
    readonly managementPort: number,
    /** Pebble's listener certificate (PEM), trusted by this process's requests to it. */
    private readonly listenerCert: Buffer,
    private readonly children: ChildProcess[],
    private readonly dir: string,
  ) {}

  /** The root that signs the certificates Pebble issues (PEM). */
  async rootCertificate(): Promise<string> {
    const answer = await this.get(this.managementPort, "/roots/0");
    if (answer.status !== 200) throw new Error(`Pebble's /roots/0 answered ${answer.status}`);
    return answer.body;
  }

  /** What Pebble printed. */
  log(): string {
    return readFileSync(join(this.dir, "pebble.log"), "utf8");
  }

  /** Passes a request on to Pebble's ACME server with its Host, so that Pebble's URLs keep naming that host. */
  proxy(req: http.IncomingMessage, res: http.ServerResponse): void {
    const upstream = https.request(
      {
        host: "127.0.0.1",
        port: this.acmePort,
        method: req.method,
        path: req.url,
        headers: req.headers,
        ca: this.listenerCert,
        timeout: 30_000,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("timeout", () => upstream.destroy(new Error("Pebble did not answer within 30 s")));
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
            child.once("exit", () => {
              clearTimeout(killer);
              resolve();
            });
            child.kill("SIGTERM");
          }),
      ),
    );
  }

  private get(port: number, path: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = https.get({ host: "127.0.0.1", port, path, ca: this.listenerCert, timeout: 5_000 }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", reject);
    });
  }
}

/** Any HTTP answer from a loopback port (status 0 when nothing answers). */
function getHttp(port: number): Promise<{ status: number }> {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/", timeout: 2_000 }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve({ status: 0 }));
  });
}
