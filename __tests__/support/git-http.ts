/**
 * git smart HTTP for test servers: hands one request to `git http-backend` (CGI) and writes its
 * answer back. Used by the provisioning harness and the boot test's stand-in server.
 */
import { spawn } from "child_process";
import { existsSync } from "fs";
import * as http from "http";
import { join } from "path";

/** Directory of git's helper programs: Debian, Fedora and Amazon Linux all use one of these. */
export function gitExecPath(): string {
  // `git --exec-path` would need a subprocess.
  for (const dir of ["/usr/lib/git-core", "/usr/libexec/git-core", "/usr/local/libexec/git-core"]) {
    if (existsSync(join(dir, "git-http-backend"))) return dir;
  }
  return "/usr/lib/git-core";
}

/** User name and password of a `Basic` Authorization header (empty strings when there is none). */
export function parseBasicAuth(header: string | undefined): [string, string] {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? "");
  if (!match) return ["", ""];
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? [decoded, ""] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/**
 * Serves one request from the bare repositories under `reposDir` (an authenticated `user`, already
 * checked by the caller); resolves with the HTTP status sent. `home` is git's HOME (no user config).
 */
export function serveGit(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  reposDir: string,
  home: string,
  user: string,
): Promise<number> {
  const url = new URL(req.url ?? "/", "https://localhost");
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: reposDir,
    GIT_HTTP_EXPORT_ALL: "1",
    GIT_CONFIG_NOSYSTEM: "1",
    HOME: home,
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.replace(/^\?/, ""),
    REQUEST_METHOD: req.method ?? "GET",
    CONTENT_TYPE: req.headers["content-type"] ?? "",
    REMOTE_USER: user,
    REMOTE_ADDR: "127.0.0.1",
    GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
    HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"] ?? ""),
  };
  if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
  const cgi = spawn(join(gitExecPath(), "git-http-backend"), [], { env, stdio: ["pipe", "pipe", "inherit"] });
  const out: Buffer[] = [];
  cgi.stdout.on("data", (chunk: Buffer) => out.push(chunk));
  req.pipe(cgi.stdin);
  return new Promise((resolve) =>
    cgi.on("close", () => {
      const data = Buffer.concat(out);
      let end = data.indexOf("\r\n\r\n");
      let skip = 4;
      if (end < 0) {
        end = data.indexOf("\n\n");
        skip = 2;
      }
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of data.subarray(0, Math.max(end, 0)).toString("latin1").split(/\r?\n/)) {
        const colon = line.indexOf(":");
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = parseInt(value, 10);
        else headers[name] = value;
      }
      res.writeHead(status, headers).end(end < 0 ? data : data.subarray(end + skip));
      resolve(status);
    }),
  );
}
