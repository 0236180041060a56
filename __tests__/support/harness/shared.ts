/**
 * What the provisioning harness's parts share (__tests__/support/harness/*, provisioning-harness.ts): the
 * machine's tools, bounded child processes, loopback servers, process groups and shell quoting.
 */
import { execFile } from "child_process";
import { accessSync, constants, readFileSync } from "fs";
import * as http from "http";
import * as https from "https";
import { AddressInfo, createServer, Server } from "net";
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

export function exec(
  file: string,
  args: string[],
  options: ExecOptions = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      {
        env: options.env ?? process.env,
        cwd: options.cwd,
        maxBuffer: 64 * 1024 * 1024,
        timeout: options.timeoutMs ?? 60_000,
        killSignal: "SIGKILL",
      },
      (error, stdout, stderr) => {
        const code = error
          ? typeof (error as { code?: unknown }).code === "number"
            ? (error as { code: number }).code
            : -1
          : 0;
        if (error && code === -1) reject(error);
        else resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    // A command that reads no input may exit before it is written; that is no error here.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(options.input ?? "");
  });
}

export async function mustExec(file: string, args: string[], options: ExecOptions = {}): Promise<string> {
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

/** A port reserved by reservedPort, held until release(). */
export interface ReservedPort {
  readonly port: number;
  release(): Promise<void>;
}

/** The lowest port reservedPort hands out. */
const RESERVED_PORTS_FROM = 20_000;

/**
 * A loopback TCP port for a server that leaves it and takes it again (the app across its restarts), free now
 * and kept for this caller until release(). freePort's port lies in the kernel's ephemeral range, so while the
 * app is down another process's listen(0) could be handed it and answer the app's health check for it (a moto
 * server answers 404, which counts as an answer). This one lies below that range
 * (/proc/sys/net/ipv4/ip_local_port_range), which the kernel hands to no one, and is held by an abstract Unix
 * socket named after it, which no other caller (in this run or a concurrent one) can take, and which goes with
 * the process if it dies.
 */
export async function reservedPort(): Promise<ReservedPort> {
  const ephemeralFrom = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
  const span = ephemeralFrom - RESERVED_PORTS_FROM;
  if (!(span > 0)) throw new Error(`no ports below the ephemeral range (it starts at ${ephemeralFrom})`);
  const start = Math.floor(Math.random() * span);
  for (let i = 0; i < span; i++) {
    const port = RESERVED_PORTS_FROM + ((start + i) % span);
    const hold = await listening(createServer(), `\0crm-test-port-${port}`);
    if (!hold) continue;
    const probe = await listening(http.createServer(), port);
    if (!probe) {
      await new Promise((resolve) => hold.close(resolve));
      continue;
    }
    await close(probe as http.Server);
    hold.unref();
    return { port, release: () => new Promise<void>((resolve) => hold.close(() => resolve())) };
  }
  throw new Error(`no free port from ${RESERVED_PORTS_FROM} to ${ephemeralFrom - 1}`);
}

/** `server` listening on `address` (a loopback port, or a Unix socket's name), or undefined when that is taken. */
function listening(server: Server, address: number | string): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "EADDRINUSE" ? resolve(undefined) : reject(error),
    );
    if (typeof address === "number") server.listen(address, "127.0.0.1", () => resolve(server));
    else server.listen(address, () => resolve(server));
  });
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
