/**
 * The provisioning harness's stand-in for the app's source host: a bare repository `crm-app.git`, seeded
 * with the app (server.js, .env, export.sql), served by `git http-backend` over TLS (a self-signed
 * certificate for 127.0.0.1, which the scripts trust through GIT_SSL_CAINFO) only with basic auth
 * `<TOKEN_USERNAME>:<token>`: proves the token really travels. It records every request; the faults
 * `step_08_fetch_repository`, `echo-token` and `kill:step_08_fetch_repository` act here.
 */
import { mkdirSync, readFileSync, writeFileSync } from "fs";
import * as https from "https";
import { join } from "path";
import { TOKEN_USERNAME } from "../../../userdata/constants";
import { parseBasicAuth, serveGit } from "../git-http";
import { Fault } from "./faults";
import { close, listen, mustExec, RecordedRequest, tool } from "./shared";

/** A request to the source host, with the basic-auth user name (or "" when none). */
export type SourceHostRequest = RecordedRequest & { readonly user: string; readonly authorized: boolean };

export interface SourceHostOptions {
  /** The directory it keeps its files in (`repos/`, `seed/`, `tls/`; git's HOME). */
  readonly dir: string;
  /** The token it accepts. */
  readonly token: string;
  /** The fault the test armed, read at each request. */
  readonly fault: () => Fault | undefined;
  /** SIGKILL to the script under test (the kill fault). */
  readonly killScript: () => void;
}

export class SourceHost {
  /** The token it accepts (a test may change it: a rotated token). */
  token: string;
  /** Requests received, in order. */
  readonly requests: SourceHostRequest[] = [];
  /** Milliseconds it waits before answering each request (to watch a clone in progress). */
  delayMs = 0;
  /** The self-signed certificate it serves (GIT_SSL_CAINFO of the scripts). */
  readonly certFile: string;
  private readonly dir: string;
  private readonly reposDir: string;
  private readonly keyFile: string;
  /** The working copy that pushes to the served repository. */
  private readonly seed: string;
  private server?: https.Server;
  private port = 0;

  constructor(private readonly options: SourceHostOptions) {
    this.token = options.token;
    this.dir = options.dir;
    this.reposDir = join(this.dir, "repos");
    this.certFile = join(this.dir, "tls", "cert.pem");
    this.keyFile = join(this.dir, "tls", "key.pem");
    this.seed = join(this.dir, "seed");
  }

  /** The repository's URL, as the settings' repoUrl. */
  get repoUrl(): string {
    return `https://127.0.0.1:${this.port}/crm-app.git`;
  }

  /** Seeds the repository, makes the certificate and starts serving (the directories `repos` and `tls` exist). */
  async start(): Promise<void> {
    await Promise.all([this.createRepository(), this.makeCertificate()]);
    await this.startServer();
  }

  /** No request recorded, no delay. */
  reset(): void {
    this.requests.length = 0;
    this.delayMs = 0;
  }

  async stop(): Promise<void> {
    if (this.server) await close(this.server);
  }

  /** Adds a commit to the served repository (to prove that a rerun pulls). */
  async commitToRepository(files: Record<string, string>, message: string): Promise<void> {
    const work = this.seed;
    for (const [name, content] of Object.entries(files)) writeFileSync(join(work, name), content);
    await this.git(["add", "--all"], work);
    await this.git(["commit", "--quiet", "-m", message], work);
    await this.git(["push", "--quiet", "origin", "HEAD:main"], work);
  }

  /**
   * Adds a commit on top of `base` and pushes it as `ref` (refs/heads/… or refs/tags/…), leaving main
   * as it is; returns its id.
   */
  async pushCommit(files: Record<string, string>, message: string, ref: string, base = "main"): Promise<string> {
    const work = this.seed;
    await this.git(["checkout", "--quiet", "--detach", base], work);
    try {
      for (const [name, content] of Object.entries(files)) writeFileSync(join(work, name), content);
      await this.git(["add", "--all"], work);
      await this.git(["commit", "--quiet", "-m", message], work);
      await this.git(["push", "--quiet", "--force", "origin", `HEAD:${ref}`], work);
      return (await this.git(["rev-parse", "HEAD"], work)).trim();
    } finally {
      await this.git(["checkout", "--quiet", "--force", "main"], work);
    }
  }

  private git(args: string[], cwd: string): Promise<string> {
    return mustExec(tool("git"), ["-c", "user.name=Harness", "-c", "user.email=harness@example.com", ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: this.dir, GIT_CONFIG_NOSYSTEM: "1" },
    });
  }

  private async createRepository(): Promise<void> {
    const seed = this.seed;
    const bare = join(this.reposDir, "crm-app.git");
    mkdirSync(seed);
    writeFileSync(
      join(seed, "server.js"),
      "require('http').createServer((q, r) => r.end('crm')).listen(process.env.PORT || 3000);\n",
    );
    writeFileSync(
      join(seed, ".env"),
      "# settings of the CRM server\nPORT=3000\nFRONTENDURI=http://localhost:8080\nSESSION_SECRET=keep-me\n",
    );
    // Two tables, so that an import stopped half way leaves one and not the other.
    writeFileSync(
      join(seed, "export.sql"),
      [
        "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL);",
        "INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace'), (3, 'Linus');",
        "CREATE TABLE orders (id INT PRIMARY KEY, customer INT NOT NULL);",
        "INSERT INTO orders VALUES (10, 1), (11, 3);",
        "",
      ].join("\n"),
    );
    await this.git(["init", "--quiet", "--initial-branch=main"], seed);
    await this.git(["add", "--all"], seed);
    await this.git(["commit", "--quiet", "-m", "initial"], seed);
    await this.git(["init", "--quiet", "--bare", "--initial-branch=main", bare], this.dir);
    await this.git(["remote", "add", "origin", bare], seed);
    await this.git(["push", "--quiet", "origin", "main"], seed);
  }

  private async makeCertificate(): Promise<void> {
    await mustExec(tool("openssl"), [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-keyout",
      this.keyFile,
      "-out",
      this.certFile,
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ]);
  }

  /** git smart HTTP over TLS, only with basic auth `<TOKEN_USERNAME>:<token>`. */
  private async startServer(): Promise<void> {
    const server = https.createServer(
      {
        key: readFileSync(this.keyFile),
        cert: readFileSync(this.certFile),
      },
      async (req, res) => {
        if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
        const url = new URL(req.url ?? "/", "https://127.0.0.1");
        const [user, password] = parseBasicAuth(req.headers.authorization);
        const authorized = user === TOKEN_USERNAME && password === this.token;
        const record = (status: number) =>
          this.requests.push({
            method: req.method ?? "",
            path: url.pathname + url.search,
            headers: req.headers,
            status,
            user,
            authorized,
          });
        if (!authorized) {
          record(401);
          res.writeHead(401, { "WWW-Authenticate": 'Basic realm="crm-app"' }).end("authentication required\n");
          return;
        }
        const fault = this.options.fault();
        if (fault === "step_08_fetch_repository") {
          record(500);
          res.writeHead(500).end("injected fault\n");
          return;
        }
        if (fault === "echo-token" && url.search.includes("service=git-upload-pack")) {
          // A server that quotes the credentials it was given in its error: git prints the message.
          record(200);
          const line = (text: string) => `${(text.length + 4).toString(16).padStart(4, "0")}${text}`;
          res
            .writeHead(200, { "Content-Type": "application/x-git-upload-pack-advertisement" })
            .end(`${line("# service=git-upload-pack\n")}0000${line(`ERR access denied for ${user}:${password}\n`)}`);
          return;
        }
        if (fault === "kill:step_08_fetch_repository" && req.method === "POST") {
          // The clone has begun (refs known, directory created) and now gets no pack: a power cut.
          record(0);
          this.options.killScript();
          res.destroy();
          return;
        }
        void serveGit(req, res, this.reposDir, this.dir, user).then(record);
      },
    );
    this.server = server;
    this.port = await listen(server);
  }
}
