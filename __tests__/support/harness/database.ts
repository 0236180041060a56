/**
 * The provisioning harness's database: the machine's real MariaDB server, private to one harness (its
 * data directory, Unix socket, port and temporary directory under the harness's directory; root by
 * the unix_socket login, as after installation). Either the harness starts it before the script
 * (start()), or, on an instance with a data volume, the script's `systemctl start mariadb` does
 * (stand-ins/database-control.sh), with the same pid file; stop() ends whichever runs.
 */
import { ChildProcess, spawn } from "child_process";
import { createHash } from "crypto";
import { existsSync, readFileSync } from "fs";
import { join } from "path";
import { exec, freePort, mustExec, tool } from "./shared";

/** The mysql_native_password hash of a password, as MariaDB's PASSWORD() computes it. */
export function nativePasswordHash(password: string): string {
  const once = createHash("sha1").update(Buffer.from(password, "utf8")).digest();
  return `*${createHash("sha1").update(once).digest("hex").toUpperCase()}`;
}

export interface HarnessDatabaseOptions {
  /** The harness's directory: the data directory `mysql/`, `mysqld.pid` and `mysqld.err` lie in it. */
  readonly dir: string;
  /** The server's Unix socket. */
  readonly socket: string;
  /** Its temporary directory. */
  readonly tmp: string;
  /** The server runs on a data volume, started and stopped by the script's database unit (not by start()). */
  readonly onDataVolume: boolean;
}

export class HarnessDatabase {
  private mariadbd?: ChildProcess;
  private mariadbdExit?: Promise<void>;

  constructor(private readonly options: HarnessDatabaseOptions) {}

  /** The server's pid file (the unit's server writes the same one). */
  get pidFile(): string {
    return join(this.options.dir, "mysqld.pid");
  }

  /** The server's error log. */
  get errorLog(): string {
    return join(this.options.dir, "mysqld.err");
  }

  /** Creates a data directory and starts the server on it; resolves once it answers (bounded). */
  async start(): Promise<void> {
    const { dir, socket, tmp } = this.options;
    const datadir = join(dir, "mysql");
    // Everything private to this harness: data directory, socket, port, temporary directory (for
    // the bootstrap server too, which otherwise shares /tmp with every other harness and test).
    const own = [`--socket=${socket}`, `--port=${await freePort()}`, "--skip-networking", `--tmpdir=${tmp}`];
    const env = { ...process.env, TMPDIR: tmp };
    await mustExec(
      tool("mariadb-install-db"),
      [
        "--no-defaults",
        `--datadir=${datadir}`,
        "--auth-root-authentication-method=socket",
        "--user=root",
        "--skip-test-db",
        ...own,
      ],
      { env, timeoutMs: 120_000 },
    );
    const child = spawn(
      tool("mariadbd"),
      [
        "--no-defaults",
        `--datadir=${datadir}`,
        ...own,
        "--user=root",
        `--pid-file=${this.pidFile}`,
        `--log-error=${this.errorLog}`,
        "--innodb-buffer-pool-size=32M",
      ],
      { stdio: "ignore", env },
    );
    this.mariadbd = child;
    this.mariadbdExit = new Promise((resolve) => child.on("exit", () => resolve()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`mariadbd exited: ${existsSync(this.errorLog) ? readFileSync(this.errorLog, "utf8") : ""}`);
      try {
        await this.query("SELECT 1");
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** Process id of the server of the pid file, if it runs. */
  pid(): number | undefined {
    if (!existsSync(this.pidFile)) return undefined;
    const pid = parseInt(readFileSync(this.pidFile, "utf8"), 10);
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  /**
   * Stops the server the script started (onDataVolume) as a stopping instance does:
   * SIGTERM, a clean shutdown, bounded; its mount namespace, and the mounts in it, go with it.
   */
  async stopManaged(): Promise<void> {
    if (!this.options.onDataVolume) return;
    const pid = this.pid();
    if (pid === undefined) return;
    process.kill(pid, "SIGTERM");
    const deadline = Date.now() + 30_000;
    while (this.pid() !== undefined) {
      if (Date.now() > deadline) process.kill(pid, "SIGKILL");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Stops whichever server runs (SIGTERM, then SIGKILL after 15 s for the one start() started). */
  async stop(): Promise<void> {
    await this.stopManaged();
    if (this.mariadbd && this.mariadbd.exitCode === null) {
      this.mariadbd.kill("SIGTERM");
      const killer = setTimeout(() => this.mariadbd?.kill("SIGKILL"), 15_000);
      await this.mariadbdExit;
      clearTimeout(killer);
    }
  }

  /** Runs SQL as root (unix socket) and returns the tab-separated rows. */
  async query(sql: string): Promise<string> {
    return (
      await mustExec(
        tool("mariadb"),
        ["--no-defaults", `--socket=${this.options.socket}`, "--user=root", "--batch", "--skip-column-names"],
        { input: sql },
      )
    ).trimEnd();
  }

  /** True when `user`@localhost can log in with exactly `password` (given through MYSQL_PWD, never argv). */
  async canLogin(user: string, password: string): Promise<boolean> {
    const result = await exec(
      tool("mariadb"),
      [
        "--no-defaults",
        `--socket=${this.options.socket}`,
        `--user=${user}`,
        "--batch",
        "--skip-column-names",
        "-e",
        "SELECT CURRENT_USER()",
      ],
      { env: { PATH: process.env.PATH, MYSQL_PWD: password } },
    );
    return result.code === 0 && result.stdout.trim() === `${user}@localhost`;
  }

  /** Runs SQL as `user` with `password` (through MYSQL_PWD, never argv), as the application does. */
  async queryAs(user: string, password: string, sql: string): Promise<string> {
    return (
      await mustExec(
        tool("mariadb"),
        ["--no-defaults", `--socket=${this.options.socket}`, `--user=${user}`, "--batch", "--skip-column-names"],
        { input: sql, env: { PATH: process.env.PATH, MYSQL_PWD: password } },
      )
    ).trimEnd();
  }
}
