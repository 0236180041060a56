/**
 * The provisioning harness's stand-in commands: the shell files of __tests__/support/stand-ins (dnf,
 * systemctl, systemd-run, the swap commands, curl, mariadb, yarn, aws, journalctl, …, which shellcheck
 * reads) copied into the harness's directory, first on the scripts' PATH, with config.sh, which they all
 * read (stand-ins/lib.sh). They record each call in a log, read the armed fault from a file, and keep
 * the pids of the transient units and of the app unit's supervisor they start.
 */
import { spawnSync } from "child_process";
import { createHash } from "crypto";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "fs";
import { join } from "path";
import { NODE_VERSION, NVM_INSTALL_URL, RESTART_SEC } from "../../../userdata/constants";
import { Fault } from "./faults";
import { findTool, groupAlive, killGroup, shq, tool } from "./shared";

/** Where the stand-in hosts' settings download Caddy (the curl stand-in serves caddyRelease there). */
export const STAND_IN_CADDY_URL = "https://caddy.stand-in.example/caddy_linux_amd64.tar.gz";

/** The stand-ins' shell files (write() copies them into each harness's directory). */
const STAND_INS = join(__dirname, "..", "stand-ins");

/**
 * The systemctl calls with which the scripts start UNIT (userdata/provision.sh: load_units LOADED, enable_unit UNIT,
 * systemctl start UNIT), as the stand-in answers them: no unit of LOADED held in an older version (no reload), and UNIT
 * enabled by an earlier run when `enabled`, else enabled without the reload an enable makes.
 */
export function startedUnitCalls(loaded: readonly string[], unit: string, enabled: boolean): string[] {
  return [
    ...loaded.map((name) => `systemctl show -p NeedDaemonReload --value ${name}`),
    `systemctl is-enabled --quiet ${unit}`,
    ...(enabled ? [] : [`systemctl enable --no-reload ${unit}`]),
    `systemctl start ${unit}`,
  ];
}

export class StandInCommands {
  /** The copy of the stand-ins, and its commands (bin/), first on the scripts' PATH. */
  readonly dir: string;
  readonly binDir: string;
  /** The log of calls, one line each: `<command> <args…>`. */
  private readonly callsFile: string;
  private readonly faultFile: string;
  private callsSeen = 0;

  /** `harnessDir`: the harness's directory, which holds the copy and the stand-ins' state. */
  constructor(private readonly harnessDir: string) {
    this.dir = join(harnessDir, "stand-ins");
    this.binDir = join(this.dir, "bin");
    this.callsFile = join(harnessDir, "calls.log");
    this.faultFile = join(harnessDir, "fault");
  }

  private release?: { readonly tarball: string; readonly sha512: string };

  /** The stand-in Caddy release (a caddy that prints its version, in a tarball as a release's) and its SHA-512, made once. */
  get caddyRelease(): { readonly tarball: string; readonly sha512: string } {
    if (!this.release) {
      const dir = join(this.harnessDir, "caddy-release");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "caddy"), "#!/bin/sh\necho v2.0.0 stand-in\n", { mode: 0o755 });
      const tarball = join(this.harnessDir, "caddy_linux_amd64.tar.gz");
      const packed = spawnSync("tar", ["-czf", tarball, "-C", dir, "caddy"], { encoding: "utf8" });
      if (packed.status !== 0) throw new Error(`packing the stand-in Caddy failed: ${packed.stderr}`);
      this.release = { tarball, sha512: createHash("sha512").update(readFileSync(tarball)).digest("hex") };
    }
    return this.release;
  }

  /** The database unit's control script (the data-volume mode), in the copy. */
  get databaseControl(): string {
    return join(this.dir, "database-control.sh");
  }

  /** The app unit's control script (the app mode), in the copy. */
  get appControl(): string {
    return join(this.dir, "app-unit.sh");
  }

  /** The armed fault (see FAULTS), or undefined. */
  get fault(): Fault | undefined {
    return existsSync(this.faultFile) ? (readFileSync(this.faultFile, "utf8") as Fault) : undefined;
  }

  set fault(fault: Fault | undefined) {
    if (fault === undefined) rmSync(this.faultFile, { force: true });
    else writeFileSync(this.faultFile, fault);
  }

  /**
   * Copies the stand-ins: the commands of bin/ without their `.sh` (mariadb also as mysql), and
   * config.sh: the values the harness gives, besides the stand-ins' own state files and the real commands they hand over to.
   */
  write(values: Record<string, string | number>): void {
    cpSync(STAND_INS, this.dir, { recursive: true });
    for (const file of readdirSync(this.binDir)) {
      const name = file.replace(/\.sh$/, "");
      renameSync(join(this.binDir, file), join(this.binDir, name));
      chmodSync(join(this.binDir, name), 0o755);
    }
    copyFileSync(join(this.binDir, "mariadb"), join(this.binDir, "mysql"));
    const dir = this.harnessDir;
    const all: Record<string, string | number> = {
      CALLS: this.callsFile,
      FAULT_FILE: this.faultFile,
      NEEDS_REBOOT: join(dir, "needs-reboot"),
      NFT_RULES: this.nftRulesFile,
      NFT_HELD: this.frontHeldFile,
      ENABLED_UNITS: this.enabledUnitsFile,
      STALE_UNITS: this.staleUnitsFile,
      SWAP_STATE: this.swapState,
      REAL_MKSWAP: tool("mkswap"),
      REAL_CHOWN: tool("chown"),
      REAL_RUNUSER: tool("runuser"),
      REAL_GIT: tool("git"),
      REAL_FLOCK: tool("flock"),
      REAL_CURL: tool("curl"),
      REAL_ID: tool("id"),
      USERS_FILE: this.usersFile,
      CADDY_URL: STAND_IN_CADDY_URL,
      CADDY_TARBALL: this.caddyRelease.tarball,
      REAL_MARIADB: tool("mariadb"),
      REAL_MARIADB_DUMP: tool("mariadb-dump"),
      APP_STATE: this.appState,
      // The ops command's transient units (systemd-run): each one's pid, by unit name.
      UNITS_DIR: this.unitsDir,
      NODE: process.execPath,
      RESTART_SEC,
      NVM_INSTALL_URL,
      NODE_VERSION,
      REAL_JOURNALCTL: findTool("journalctl") ?? "",
      ...values,
    };
    writeFileSync(
      join(this.dir, "config.sh"),
      [
        "# This harness's values, read by the stand-ins (lib.sh).",
        ...Object.entries(all).map(([name, value]) => `${name}=${shq(String(value))}`),
        "",
      ].join("\n"),
    );
  }

  /** Every call recorded so far. */
  calls(): string[] {
    if (!existsSync(this.callsFile)) return [];
    return readFileSync(this.callsFile, "utf8")
      .split("\n")
      .filter((line) => line !== "");
  }

  /** Every call recorded so far, and those recorded since the last takeCalls(). */
  takeCalls(): { calls: string[]; newCalls: string[] } {
    const calls = this.calls();
    const newCalls = calls.slice(this.callsSeen);
    this.callsSeen = calls.length;
    return { calls, newCalls };
  }

  /** Process ids of the transient units the systemd-run stand-in started (each the leader of its own group), by unit name. */
  units(): Map<string, number> {
    const dir = this.unitsDir;
    if (!existsSync(dir)) return new Map();
    return new Map(readdirSync(dir).map((name) => [name, parseInt(readFileSync(join(dir, name), "utf8"), 10)]));
  }

  /** Waits (bounded) until no process of any transient unit runs; false when one still runs at the deadline. */
  async unitsEnded(timeoutMs = 60_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const running = [...this.units().values()].filter((pid) => groupAlive(pid));
      if (running.length === 0) return true;
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** SIGKILL to every transient unit and to the app unit's supervisor, which leads a session of its own (its group goes with server.js). */
  killAll(): void {
    for (const pid of this.units().values()) killGroup(pid);
    const appSupervisor = join(this.appState, "pid");
    if (existsSync(appSupervisor)) killGroup(parseInt(readFileSync(appSupervisor, "utf8"), 10));
  }

  /** Forgets the active swap areas, as a reboot does (the script adds no fstab entry). */
  deactivateSwaps(): void {
    rmSync(this.swapState, { force: true });
  }

  /** No call recorded, no active swap area, no fault. */
  reset(): void {
    for (const file of [this.swapState, this.callsFile, this.faultFile]) rmSync(file, { force: true });
    this.callsSeen = 0;
  }

  /** The rules the nft stand-in was given (-f), one call after another. */
  get nftRulesFile(): string {
    return join(this.harnessDir, "nft-rules.log");
  }

  /** The units systemctl enabled (one a line), which its is-enabled answers from. */
  get enabledUnitsFile(): string {
    return join(this.harnessDir, "enabled-units");
  }

  /** The units systemctl reports NeedDaemonReload=yes for (one a line), until the next daemon-reload. */
  get staleUnitsFile(): string {
    return join(this.harnessDir, "stale-units");
  }

  /** The users useradd made, one name a line, which the id stand-in knows (as of uid 990). */
  get usersFile(): string {
    return join(this.harnessDir, "users");
  }

  /** The front's set `held` as the nft stand-in keeps it (absent: no front installed). */
  get frontHeldFile(): string {
    return join(this.harnessDir, "nft-held");
  }

  private get swapState(): string {
    return join(this.harnessDir, "swaps.active");
  }

  private get appState(): string {
    return join(this.harnessDir, "app-unit");
  }

  private get unitsDir(): string {
    return join(this.harnessDir, "units");
  }
}
