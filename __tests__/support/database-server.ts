/**
 * A MariaDB server standing in for Amazon RDS for MariaDB (the scale-out topology's database), for the
 * integration and boot tests: the machine's real server on a free loopback TCP port, in a private
 * temporary directory; root only through its Unix socket (on RDS, the administrator's account is
 * RDS's own), and a master user that logs in over TCP with exactly the privileges RDS gives its master
 * user for MariaDB (RDS_MASTER_PRIVILEGES). Every wait is bounded; stop() removes everything.
 *
 *   const db = await DatabaseServer.start({ masterUser: "admin", masterPassword });
 *   await db.query("SELECT 1");  await db.queryAs("crm_app", password, "SELECT 1");  await db.stop();
 */
import { ChildProcess, execFile, spawn } from "child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { freePort } from "./moto-server";
import { findTool, tool } from "./harness/shared";

/**
 * The master user's privileges on RDS for MariaDB (up to 11.4, which adds SHOW CREATE ROUTINE), as RDS's
 * user guide lists them ("Master user account privileges"), with GRANT OPTION: not SUPER, FILE or
 * DELETE HISTORY, so that what the provisioning script does as the master user is what RDS lets it do.
 */
export const RDS_MASTER_PRIVILEGES = [
  "SELECT",
  "INSERT",
  "UPDATE",
  "DELETE",
  "CREATE",
  "DROP",
  "RELOAD",
  "PROCESS",
  "REFERENCES",
  "INDEX",
  "ALTER",
  "SHOW DATABASES",
  "CREATE TEMPORARY TABLES",
  "LOCK TABLES",
  "EXECUTE",
  "REPLICATION CLIENT",
  "CREATE VIEW",
  "SHOW VIEW",
  "CREATE ROUTINE",
  "ALTER ROUTINE",
  "CREATE USER",
  "EVENT",
  "TRIGGER",
  "REPLICATION SLAVE",
] as const;

/** The commands the stand-in needs that this machine lacks (empty when it can run). */
export function databaseServerToolsMissing(): string[] {
  return ["mariadbd", "mariadb-install-db", "mariadb"].filter((name) => !findTool(name));
}

export interface DatabaseServerOptions {
  /** The master user's name and password (the password given once, through SQL on standard input). */
  readonly masterUser: string;
  readonly masterPassword: string;
}

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(
  file: string,
  args: string[],
  input = "",
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 60_000,
): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      { env, timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error
          ? typeof (error as { code?: unknown }).code === "number"
            ? (error as { code: number }).code
            : -1
          : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(input);
  });
}

async function mustRun(
  file: string,
  args: string[],
  input = "",
  env?: NodeJS.ProcessEnv,
  timeoutMs?: number,
): Promise<string> {
  const result = await run(file, args, input, env, timeoutMs);
  if (result.code !== 0) throw new Error(`${file} ${args.join(" ")} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** A SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

export class DatabaseServer {
  /** Starts the server and creates the master user; on failure, stops what was started and rethrows. */
  static async start(options: DatabaseServerOptions): Promise<DatabaseServer> {
    const server = new DatabaseServer(options);
    try {
      await server.startServer();
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  /** The private directory (data, socket, temporary files, error log). */
  readonly dir = mkdtempSync(join(tmpdir(), "crm-rds-standin-"));
  /** The TCP port on 127.0.0.1. */
  port = 0;
  private child?: ChildProcess;
  private exited?: Promise<void>;

  private constructor(readonly options: DatabaseServerOptions) {}

  /** The server's Unix socket: root's way in, as `sudo mariadb` on a host. */
  get socket(): string {
    return join(this.dir, "mysqld.sock");
  }

  private async startServer(): Promise<void> {
    const tmp = join(this.dir, "tmp");
    mkdirSync(tmp);
    this.port = await freePort();
    const datadir = join(this.dir, "data");
    const own = [`--socket=${this.socket}`, `--tmpdir=${tmp}`];
    const env = { ...process.env, TMPDIR: tmp };
    await mustRun(
      tool("mariadb-install-db"),
      [
        "--no-defaults",
        `--datadir=${datadir}`,
        "--auth-root-authentication-method=socket",
        "--user=root",
        "--skip-test-db",
        "--skip-networking",
        ...own,
      ],
      "",
      env,
      120_000,
    );
    const child = spawn(
      tool("mariadbd"),
      [
        "--no-defaults",
        `--datadir=${datadir}`,
        ...own,
        `--port=${this.port}`,
        "--bind-address=127.0.0.1",
        "--user=root",
        `--pid-file=${join(this.dir, "mysqld.pid")}`,
        `--log-error=${join(this.dir, "mysqld.err")}`,
        "--innodb-buffer-pool-size=32M",
      ],
      { stdio: "ignore", env },
    );
    this.child = child;
    this.exited = new Promise((resolve) => child.on("exit", () => resolve()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`mariadbd exited: ${this.errorLog()}`);
      if (
        (await run(tool("mariadb"), ["--no-defaults", `--socket=${this.socket}`, "--user=root", "-e", "SELECT 1"]))
          .code === 0
      )
        break;
      if (Date.now() > deadline) throw new Error(`mariadbd did not answer within 30 s: ${this.errorLog()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const master = `${sqlString(this.options.masterUser)}@'%'`;
    await this.query(`CREATE USER ${master} IDENTIFIED BY ${sqlString(this.options.masterPassword)};
GRANT ${RDS_MASTER_PRIVILEGES.join(", ")} ON *.* TO ${master} WITH GRANT OPTION;`);
  }

  private errorLog(): string {
    const file = join(this.dir, "mysqld.err");
    return existsSync(file) ? readFileSync(file, "utf8") : "";
  }

  /** SQL as root (through the socket); the tab-separated rows. */
  async query(sql: string): Promise<string> {
    return (
      await mustRun(
        tool("mariadb"),
        ["--no-defaults", `--socket=${this.socket}`, "--user=root", "--batch", "--skip-column-names"],
        sql,
      )
    ).trimEnd();
  }

  /** SQL as `user` with `password` (through MYSQL_PWD, never argv), over TCP, as a host reaches RDS. */
  queryAs(user: string, password: string, sql: string): Promise<Result> {
    return run(
      tool("mariadb"),
      ["--no-defaults", "--host=127.0.0.1", `--port=${this.port}`, `--user=${user}`, "--batch", "--skip-column-names"],
      sql,
      { PATH: process.env.PATH, MYSQL_PWD: password },
    );
  }

  /** Stops the server cleanly (bounded, then SIGKILL) and removes its directory; safe to call twice. */
  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGTERM");
      const killer = setTimeout(() => this.child?.kill("SIGKILL"), 15_000);
      await this.exited;
      clearTimeout(killer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
