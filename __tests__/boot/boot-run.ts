/**
 * What every file of the boot test shares: its figures (each check printed at the end, then
 * `boot: N passed, N failed`), fresh secrets, and the machine-side set-up (a private directory, the
 * image, the packages, moto's server, the accelerator, Debian's Caddy, the app's repository and the
 * stand-in server). Each file runs its own: `npm test` runs the files side by side, as phases of
 * their own (scripts/check.sh), so that one file's waits are the other's CPU.
 */
import { randomBytes } from "crypto";
import { mkdtempSync, readFileSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { CaddyMirror, packDebianCaddy, serveCaddy } from "./caddy-mirror";
import { createRepository, fetchPackages, PackageFiles, StandInServer } from "./stand-ins";
import { Accelerator, BootImage, buildImage, probeAccelerator } from "./vm";

/** Bounds of the first boot's waits, generous for software emulation on a busy 2-core machine. */
export const FIRST_BOOT_LIMIT_MS = 15 * 60_000;
export const REBOOT_LIMIT_MS = 8 * 60_000;

interface Figure {
  readonly name: string;
  readonly value: string;
  readonly ok: boolean;
}

/** The checks of one boot test file, printed when it ends. */
export class Figures {
  private readonly rows: Figure[] = [];

  /** Records a figure; throws (failing the test) when it is not ok. */
  readonly figure = (name: string, value: string, ok: boolean): void => {
    this.rows.push({ name, value, ok });
    if (!ok) throw new Error(`${name}: ${value}`);
  };

  /** The rows, then `boot: N passed, N failed` (the count `npm test` sums). */
  print(): void {
    const width = Math.max(...this.rows.map((f) => f.name.length), 10);
    const lines = this.rows.map((f) => `${f.ok ? "ok  " : "FAIL"} ${f.name.padEnd(width)}  ${f.value}`);
    const passed = this.rows.filter((f) => f.ok).length;
    process.stdout.write(
      `\n== boot test figures\n${lines.join("\n")}\nboot: ${passed} passed, ${this.rows.length - passed} failed\n`,
    );
  }
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Where a first boot's provisioning spent its time, from its log (whole seconds): before step 1 (the modules'
 * read, the telemetry timer), then each step that took a second or more, by number.
 */
export function stepTimes(log: string): string {
  const time = (stamp: string) => Date.parse(stamp) / 1000;
  const first = /^(\S+Z) /m.exec(log)?.[1];
  const marks = [...log.matchAll(/^(\S+Z) \S+: (START|DONE) step_(\d\d)_/gm)];
  const start = (step: string) => marks.find((m) => m[2] === "START" && m[3] === step)?.[1];
  const parts = marks
    .filter((m) => m[2] === "DONE")
    .flatMap((m) => {
      const began = start(m[3]);
      const took = began === undefined ? NaN : time(m[1]) - time(began);
      return took >= 1 ? [`${m[3]} ${took} s`] : [];
    });
  const firstStart = marks.find((m) => m[2] === "START")?.[1];
  const before = first && firstStart ? `before step 1 ${time(firstStart) - time(first)} s` : "no step started";
  return [before, ...parts].join(", ");
}

/** Fresh secrets each run, with shell, SQL and URL metacharacters: none may reach a log. */
export function bootSecrets(): { db_root_password: string; app_db_password: string; source_host_token: string } {
  const suffix = randomBytes(6).toString("hex");
  return {
    db_root_password: `Root'"$(id)\`x\` %{y} ${suffix}R`,
    app_db_password: `App pass'; -- \\ & ${suffix}A`,
    source_host_token: `ghp_Boot${suffix}Token/+=`,
  };
}

/** Every form in which a secret could leak: raw, URL-encoded, base64, hex. */
export function secretForms(secrets: Record<string, string>): string[] {
  return Object.values(secrets).flatMap((s) => [
    s,
    encodeURIComponent(s),
    Buffer.from(s).toString("base64"),
    Buffer.from(s).toString("hex"),
  ]);
}

/** The machine side of one boot test file: what `startBootRun` makes and `stop` ends. */
export class BootRun {
  /** The file's private directory; each host's files go to `<work>/<host>`. */
  readonly work = mkdtempSync(join(tmpdir(), "crm-boot-"));
  image!: BootImage;
  packages!: PackageFiles;
  moto?: MotoServer;
  accel!: Accelerator;
  /** Which accelerator, and why (the KVM probe's answer). */
  accelNote = "";
  caddy!: CaddyMirror;
  standIns?: StandInServer;

  /**
   * The image, the packages and moto's server side by side, then the accelerator and Debian's Caddy.
   * Whatever fails, what started is this run's to stop: one moto left running keeps jest from ever exiting.
   */
  async prepare(): Promise<void> {
    const [built, fetched, started] = await Promise.allSettled([
      buildImage(),
      fetchPackages(),
      MotoServer.start(findMotoServer()!),
    ]);
    if (started.status === "fulfilled") this.moto = started.value;
    const value = <T>(result: PromiseSettledResult<T>): T => {
      if (result.status === "rejected") throw result.reason;
      return result.value;
    };
    this.image = value(built);
    this.packages = value(fetched);
    value(started);
    const accel = await probeAccelerator(this.image, this.work);
    this.accelNote = `${accel.accel} (${accel.reason})`;
    this.accel = accel.accel;
    this.caddy = await packDebianCaddy(this.work);
  }

  /** The app's repository (the files of __tests__/boot/app) behind the stand-in server, which also serves Caddy. */
  async startStandIns(repoUrl: string, token: string): Promise<StandInServer> {
    const reposDir = join(this.work, "repos");
    const repoPath = new URL(repoUrl).pathname.replace(/^\//, "").replace(/\.git$/, "");
    const app = (name: string) => readFileSync(join(__dirname, "app", name), "utf8");
    await createRepository(
      reposDir,
      repoPath,
      {
        "server.js": app("server.js"),
        "package.json": app("package.json"),
        "export.sql": app("export.sql"),
        ".env": app("env.example"),
      },
      join(this.work, "git"),
    );
    this.standIns = await StandInServer.start({
      image: this.image,
      packages: this.packages,
      dir: join(this.work, "stand-ins"),
      token,
      reposDir,
      awsPort: this.moto!.port,
    });
    serveCaddy(this.standIns, this.caddy);
    return this.standIns;
  }

  /** The stand-in server and moto stopped, the private directory removed (the hosts are the file's to kill first). */
  async stop(): Promise<void> {
    try {
      await this.standIns?.stop();
      await this.moto?.stop();
    } finally {
      rmSync(this.work, { recursive: true, force: true });
    }
  }
}
