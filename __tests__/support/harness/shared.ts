/**
 * What the provisioning harness's parts share (__tests__/support/harness/*, provisioning-harness.ts): the
 * machine's tools, bounded child processes, loopback servers, process groups and shell quoting.
 */
import { execFile } from "child_process";
import { accessSync, constants } from "fs";
import * as http from "http";
import * as https from "https";
import { AddressInfo } from "net";
import { delimiter, join } from "path";

export function findTool(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/local/sbin", "/usr/sbin", "/sbin"];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

export function tool(name: string): string {
  const path = findTool(name);
  if (!path) throw new Error(`${name} is not installed`);
  return path;
}

/** A request a stand-in server received, as the harness records it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  /** HTTP status the stand-in answered with. */
  readonly status: number;
}

export interface ExecOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
  cwd?: string;
  /** Kills the command after this many milliseconds (every wait is bounded). Default: 60 s. */
  timeoutMs?: number;
}

export function exec(file: string, args: string[], options: ExecOptions = {}):
Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, {
      env: options.env ?? process.env, cwd: options.cwd, maxBuffer: 64 * 1024 * 1024,
      timeout: options.timeoutMs ?? 60_000, killSignal: "SIGKILL",
    },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === "number" ? (error as { code: number }).code : -1) : 0;
        if (error && code === -1) reject(error);
        else resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      });
    // A command that reads no input may exit before it is written; that is no error here.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(options.input ?? "");
  });
}

export async function mustExec(file: string, args: string[], options: ExecOptions = {}):
Promise<string> {
  const result = await exec(file, args, options);
  if (result.code !== 0) throw new Error(`${file} ${args.join(" ")} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

export function listen(server: http.Server | https.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}

/** A TCP port that was free a moment ago on loopback. */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  const port = await listen(server);
  await close(server);
  return port;
}

export function close(server: http.Server | https.Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
}

/** True while a process of the group `pgid` runs. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILL to a process group, if it is still there. */
export function killGroup(pid: number | undefined): void {
  try {
    if (pid) process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** A word for the shell, single-quoted (the renderer's own quoting). */
export { shellQuote as shq } from "../../../userdata/script";
