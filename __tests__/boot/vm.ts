/**
 * A small library for booting the Debian 12 test image in qemu (the boot test, `npm run test:boot`):
 *
 *   const image = await buildImage();                       // cached by a hash of its inputs
 *   const accel = await probeAccelerator(image, work);      // "kvm" only where KVM really runs a guest
 *   const root = await createOverlay(image, join(work, "host-a.qcow2"));  // a fresh root disk
 *   const seed = await createSeedIso(join(work, "seed.iso"), userData, metaData);
 *   const vm = await Vm.boot({ image, accel, rootDisk: root, seedIso: seed, workDir: work,
 *     guestPorts: [22, 80, 3000], standInPort, drives: [{ file: data, serial: "vol0123…", bus: "nvme" }] });
 *   await vm.waitForSsh(300_000); await vm.ssh("systemctl is-active mariadb");
 *   await vm.reboot(); await vm.shutdown();                  // vm.kill() in every finally
 *
 * Every wait is bounded; qemu runs under `timeout` and a guard that kills it as soon as this
 * process is gone, however it ended. The guest has no route anywhere (`restrict=on`): it reaches
 * only the forwarded ports, and 10.0.2.100:443, which qemu forwards to the host's stand-in server
 * (and any guestForwards).
 */
import { ChildProcess, execFile, spawn } from "child_process";
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "fs";
import * as http from "http";
import { AddressInfo, createServer } from "net";
import { delimiter, join, resolve } from "path";

/** The guest address that qemu forwards to the host's stand-in server (see scripts/boot/stand-in-hosts.txt). */
export const STAND_IN_ADDRESS = "10.0.2.100";
/** The Region whose AWS endpoints the image maps to the stand-in server (scripts/boot/stand-in-hosts.txt). */
export const BOOT_REGION = "us-east-1";
/** The role credentials' secret by key id, as the image's metadata stand-in serves them (scripts/boot/image/usr/local/sbin/imds-standin). */
export const BOOT_ROLE_SECRETS: Readonly<Record<string, string>> = { ASIABOOTTESTROLE0001: "boot-test-secret" };

/** Host names the image maps to STAND_IN_ADDRESS. */
export const STAND_IN_HOSTS: readonly string[] = readFileSync(
  resolve(__dirname, "../../scripts/boot/stand-in-hosts.txt"),
  "utf8",
)
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#"));

/** Commands the boot test needs on the host. */
const TOOLS = [
  "qemu-system-x86_64",
  "qemu-img",
  "mmdebstrap",
  "mkfs.xfs",
  "mkfs.ext4",
  "genisoimage",
  "ssh",
  "ssh-keygen",
  "socat",
  "openssl",
  "timeout",
  "python3",
  "tar",
  "caddy",
  "pebble",
  "pebble-challtestsrv",
];

/**
 * Longest life of one qemu process, whatever happens to the test process. Host A lives through its first boot, the
 * ops and everyday scenarios and its reboot: beside the other phases of `npm test` that passed 30 min, and the former
 * 1,800 s killed it at its reboot in two runs. Each test's own bound is jest's (40 min, first-boot.boot.ts); this one
 * bounds qemu should the guard itself fail.
 */
const QEMU_LIFETIME_SECONDS = 3600;
/** How long the shared ssh connection to a guest (Vm.ssh) stays after its last command. */
const MUX_PERSIST_SECONDS = 120;

export interface BootImage {
  readonly dir: string;
  readonly rootImage: string;
  readonly kernel: string;
  readonly initrd: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly sshKey: string;
  readonly fsType: "xfs" | "ext4";
  /** Seconds the build took (0 when the cached image was used). */
  readonly buildSeconds: number;
}

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function findTool(name: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? "").split(delimiter), "/usr/local/sbin", "/usr/sbin", "/sbin"]) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Host commands the boot test needs that are missing here (empty when it can run). */
export function bootToolsMissing(): string[] {
  const missing = TOOLS.filter((name) => !findTool(name));
  if (process.getuid?.() !== 0) missing.push("root (mmdebstrap and mkfs build the image as root)");
  return missing;
}

/** Runs a command; resolves with its exit code and output, killing it after `timeoutMs`. */
export function run(
  file: string,
  args: string[],
  options: { input?: string | Buffer; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<CommandResult> {
  return new Promise((resolvePromise, reject) => {
    const child = execFile(
      findTool(file) ?? file,
      args,
      {
        timeout: options.timeoutMs ?? 60_000,
        killSignal: "SIGKILL",
        maxBuffer: 256 * 1024 * 1024,
        env: options.env ?? process.env,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        if (
          error &&
          typeof (error as { code?: unknown }).code !== "number" &&
          !(error as { killed?: boolean }).killed
        ) {
          reject(error);
          return;
        }
        const code = error
          ? typeof (error as { code?: unknown }).code === "number"
            ? (error as { code: number }).code
            : 124
          : 0;
        resolvePromise({ code, stdout, stderr });
      },
    );
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(options.input ?? "");
  });
}

async function mustRun(
  file: string,
  args: string[],
  options: { input?: string | Buffer; timeoutMs?: number } = {},
): Promise<string> {
  const result = await run(file, args, options);
  if (result.code !== 0)
    throw new Error(`${file} ${args.join(" ")} failed (${result.code}):\n${result.stderr}${result.stdout}`);
  return result.stdout;
}

/** Builds the image with scripts/boot/build-image.sh, or finds it in the cache. */
export async function buildImage(timeoutMs = 20 * 60_000): Promise<BootImage> {
  const started = Date.now();
  const script = resolve(__dirname, "../../scripts/boot/build-image.sh");
  const result = await run("bash", [script], { timeoutMs });
  if (result.code !== 0) throw new Error(`building the boot image failed:\n${result.stderr}`);
  const dir = result.stdout.trim().split("\n").pop() ?? "";
  const built = result.stderr.includes("built in");
  return {
    dir,
    rootImage: join(dir, "root.img"),
    kernel: join(dir, "vmlinuz"),
    initrd: join(dir, "initrd.img"),
    caCert: join(dir, "ca.pem"),
    caKey: join(dir, "ca.key"),
    sshKey: join(dir, "id_ed25519"),
    fsType: readFileSync(join(dir, "fs-type"), "utf8").trim() as "xfs" | "ext4",
    buildSeconds: built ? (Date.now() - started) / 1000 : 0,
  };
}

/** A copy-on-write root disk over the cached image: a fresh host, instantly. */
export async function createOverlay(image: BootImage, file: string): Promise<string> {
  await mustRun("qemu-img", ["create", "-q", "-f", "qcow2", "-F", "raw", "-b", image.rootImage, file]);
  return file;
}

/** An empty raw disk of `size` (for example "1G"), sparse. */
export async function createDisk(file: string, size: string): Promise<string> {
  await mustRun("qemu-img", ["create", "-q", "-f", "raw", file, size]);
  return file;
}

/** The NoCloud seed as cloud-init reads it from a disk labelled `cidata`: user data byte for byte. */
export async function createSeedIso(file: string, userData: Buffer, metaData: string): Promise<string> {
  const dir = `${file}.d`;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "user-data"), userData, { mode: 0o600 });
  writeFileSync(join(dir, "meta-data"), metaData, { mode: 0o600 });
  // As EC2's metadata does, the seed names the network: DHCP on the one NIC.
  writeFileSync(join(dir, "network-config"), "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n", { mode: 0o600 });
  // The platform's part, beside the user's: one host key (the test's ssh takes any), since generating
  // cloud-init's default RSA key took 3 to 13 s of each emulated first boot (docs/testing.md, Benchmarks).
  writeFileSync(join(dir, "vendor-data"), "#cloud-config\nssh_genkeytypes: [ed25519]\n", { mode: 0o600 });
  await mustRun("genisoimage", [
    "-quiet",
    "-output",
    file,
    "-volid",
    "cidata",
    "-joliet",
    "-rock",
    join(dir, "user-data"),
    join(dir, "meta-data"),
    join(dir, "network-config"),
    join(dir, "vendor-data"),
  ]);
  rmSync(dir, { recursive: true, force: true });
  return file;
}

/** A TCP port that is free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePromise(port));
    });
  });
}

export type Accelerator = "kvm" | "tcg";

/**
 * "kvm" when /dev/kvm runs this kernel up to its init (a probe boot of at most `timeoutMs`);
 * "tcg" otherwise. On these machines /dev/kvm opens but the guest dies with an emulation error, or
 * prints nothing while its qemu spins a core: a probe whose console stays empty for `silentMs` is
 * ended then (a kernel under working KVM prints its first lines within a second).
 */
export async function probeAccelerator(
  image: BootImage,
  workDir: string,
  timeoutMs = 20_000,
  silentMs = 6_000,
): Promise<{ accel: Accelerator; reason: string }> {
  if (!existsSync("/dev/kvm")) return { accel: "tcg", reason: "no /dev/kvm" };
  try {
    accessSync("/dev/kvm", constants.R_OK | constants.W_OK);
  } catch {
    return { accel: "tcg", reason: "/dev/kvm is not usable by this user" };
  }
  const console = join(workDir, "kvm-probe.log");
  // rdinit that does not exist: the kernel boots, fails to run it, and panics; panic=-1 ends qemu.
  const child = spawn(
    findTool("timeout") ?? "timeout",
    [
      "-s",
      "KILL",
      String(Math.ceil(timeoutMs / 1000)),
      findTool("qemu-system-x86_64") ?? "qemu-system-x86_64",
      "-accel",
      "kvm",
      "-cpu",
      "max",
      "-m",
      "256",
      "-smp",
      "1",
      "-display",
      "none",
      "-no-reboot",
      "-monitor",
      "none",
      "-serial",
      `file:${console}`,
      "-kernel",
      image.kernel,
      "-append",
      "console=ttyS0 panic=-1 rdinit=/crm-kvm-probe-none",
    ],
    { stdio: ["ignore", "ignore", "pipe"], detached: true },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let silent = false;
  const started = Date.now();
  const watch = setInterval(() => {
    if (Date.now() - started < silentMs || (existsSync(console) && statSync(console).size > 0)) return;
    silent = true;
    killGroup(child);
  }, 250);
  const code = await new Promise<number | null>((resolvePromise) => child.on("close", (c) => resolvePromise(c)));
  clearInterval(watch);
  if (silent) return { accel: "tcg", reason: `KVM probe failed: no kernel output in ${silentMs / 1000} s` };
  const text = existsSync(console) ? readFileSync(console, "utf8") : "";
  // The kernel got as far as looking for its init: everything before ran under KVM.
  if (/Kernel panic|No working init found|Run \/crm-kvm-probe-none/.test(text) && !/KVM internal error/.test(stderr)) {
    return { accel: "kvm", reason: "a probe boot under KVM reached init" };
  }
  const why = stderr.split("\n").find((line) => line.trim() !== "") ?? `exit ${code}, no kernel output`;
  return { accel: "tcg", reason: `KVM probe failed: ${why.trim().slice(0, 160)}` };
}

export interface DriveSpec {
  /** Disk image file. */
  readonly file: string;
  /** Default "raw". */
  readonly format?: "raw" | "qcow2";
  /** Serial number the guest sees (for NVMe: /dev/disk/by-id/nvme-…_<serial>). */
  readonly serial?: string;
  /** Default "virtio" (/dev/vdX); "nvme" appears as /dev/nvmeXn1, as EBS volumes do on Nitro instances. */
  readonly bus?: "virtio" | "nvme";
}

export interface BootOptions {
  readonly image: BootImage;
  readonly accel: Accelerator;
  /** Root disk (an overlay from createOverlay), attached first: /dev/vda. */
  readonly rootDisk: string;
  /** NoCloud seed (createSeedIso), attached second: /dev/vdb. */
  readonly seedIso?: string;
  /** Further disks, after the seed. */
  readonly drives?: readonly DriveSpec[];
  /** Private directory of this VM's files (console log). */
  readonly workDir: string;
  /** Guest TCP ports forwarded from free host ports on 127.0.0.1 (22 is always forwarded). */
  readonly guestPorts?: readonly number[];
  /** Host port that STAND_IN_ADDRESS:443 in the guest reaches (the stand-in HTTPS server). */
  readonly standInPort?: number;
  /**
   * Further guest addresses (`10.0.2.x:port`) that qemu forwards to host loopback ports, such as a
   * database server standing in for RDS (host D of the boot test).
   * @default - none
   */
  readonly guestForwards?: readonly { readonly guest: string; readonly hostPort: number }[];
  /** Default 1024 (a t3.micro's 1 GiB). */
  readonly memoryMiB?: number;
  /** Default 2 (a t3.micro's 2 vCPUs). */
  readonly cpus?: number;
  /** Name used in file names and messages. Default "vm". */
  readonly name?: string;
  /** A directory to remove if this process dies while the VM runs (the test's private directory). */
  readonly removeOnAbort?: string;
}

/** Kills the guard, `timeout` and qemu (with its socat children): they share one process group. */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) killGroup(child);
});
// npm test stopped (the boot test's environment, __tests__/boot/environment.js): the VMs go at once, so
// that every wait on them ends and afterAll runs.
(globalThis as { crmBootStop?: AbortSignal }).crmBootStop?.addEventListener("abort", () => {
  for (const child of running) killGroup(child);
});

/**
 * Runs qemu under a guard in its own process group: `timeout` bounds its life, and the guard kills
 * the whole group (and removes `removeOnAbort`, if given) as soon as this test process is gone, even
 * when it was killed without a chance to clean up (jest's sandbox does not see signal handlers).
 */
const GUARD = `parent=$1 remove=$2 limit=$3
shift 3
# --foreground: timeout stays in this process group, so killing the group kills qemu too.
timeout --foreground -s KILL "$limit" "$@" &
q=$!
while kill -0 "$parent" 2>/dev/null; do
  if ! kill -0 "$q" 2>/dev/null; then wait "$q"; exit $?; fi
  sleep 1
done
[ -z "$remove" ] || rm -rf -- "$remove"
kill -KILL -- -$$`;

export class Vm {
  /** Starts qemu; resolves once the process runs (not once the guest is up: see waitForSsh). */
  static async boot(options: BootOptions): Promise<Vm> {
    const name = options.name ?? "vm";
    const ports = new Map<number, number>();
    for (const guest of new Set([22, ...(options.guestPorts ?? [])])) ports.set(guest, await freePort());
    const forwards = [...ports].map(([guest, host]) => `hostfwd=tcp:127.0.0.1:${host}-:${guest}`);
    if (options.standInPort) {
      forwards.push(
        `guestfwd=tcp:${STAND_IN_ADDRESS}:443-cmd:${findTool("socat")} - TCP:127.0.0.1:${options.standInPort}`,
      );
    }
    for (const { guest, hostPort } of options.guestForwards ?? []) {
      forwards.push(`guestfwd=tcp:${guest}-cmd:${findTool("socat")} - TCP:127.0.0.1:${hostPort}`);
    }
    const args = [
      // Under emulation, the plain x86-64 model: with `max` the guest's kernel and libraries take newer
      // instructions, which TCG emulates at a cost (about a tenth more CPU). And the guest's vCPUs in one host
      // thread: beside npm test's other phases, one thread each spent about a tenth more CPU on the same work,
      // a vCPU waiting for the other while the host ran something else (docs/testing.md, Benchmarks).
      ...(options.accel === "kvm"
        ? ["-accel", "kvm", "-cpu", "max"]
        : ["-accel", "tcg,thread=single", "-cpu", "qemu64"]),
      "-m",
      String(options.memoryMiB ?? 1024),
      "-smp",
      String(options.cpus ?? 2),
      "-display",
      "none",
      "-monitor",
      "none",
      "-serial",
      `file:${join(options.workDir, `${name}-console.log`)}`,
      "-kernel",
      options.image.kernel,
      "-initrd",
      options.image.initrd,
      // The guest is the test's own: no speculative-execution mitigations, whose retpolines cost time under
      // emulation (docs/testing.md, Benchmarks).
      "-append",
      "root=/dev/vda rw console=ttyS0 net.ifnames=0 mitigations=off",
      "-drive",
      `file=${options.rootDisk},if=virtio,format=qcow2`,
      "-netdev",
      `user,id=n0,restrict=on,${forwards.join(",")}`,
      "-device",
      "virtio-net-pci,netdev=n0",
    ];
    if (options.seedIso) args.push("-drive", `file=${options.seedIso},if=virtio,format=raw,readonly=on`);
    (options.drives ?? []).forEach((drive, i) => {
      const id = `extra${i}`;
      args.push("-drive", `file=${drive.file},if=none,id=${id},format=${drive.format ?? "raw"}`);
      const serial = drive.serial ? `,serial=${drive.serial}` : "";
      args.push("-device", `${drive.bus === "nvme" ? "nvme" : "virtio-blk-pci"},drive=${id}${serial}`);
    });
    const qemuLog = join(options.workDir, `${name}-qemu.log`);
    const child = spawn(
      "bash",
      [
        "-c",
        GUARD,
        "qemu-guard",
        String(process.pid),
        options.removeOnAbort ?? "",
        String(QEMU_LIFETIME_SECONDS),
        findTool("qemu-system-x86_64") ?? "qemu-system-x86_64",
        ...args,
      ],
      { stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    running.add(child);
    const vm = new Vm(name, options, child, ports, qemuLog);
    // qemu exits at once on a bad option; give it a moment to say so.
    await new Promise((r) => setTimeout(r, 500));
    if (child.exitCode !== null) throw new Error(`qemu exited at start (${child.exitCode}):\n${vm.qemuOutput}`);
    return vm;
  }

  /** Time qemu was started (ms since the epoch). */
  readonly startedAt = Date.now();
  private output = "";
  private readonly exited: Promise<void>;

  private constructor(
    readonly name: string,
    private readonly options: BootOptions,
    private readonly child: ChildProcess,
    /** Guest port -> host port on 127.0.0.1. */
    readonly ports: ReadonlyMap<number, number>,
    private readonly qemuLog: string,
  ) {
    child.stdout?.on("data", (chunk: Buffer) => {
      this.output += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      this.output += chunk.toString();
    });
    this.exited = new Promise((r) =>
      child.on("close", () => {
        running.delete(child);
        writeFileSync(this.qemuLog, this.output);
        r();
      }),
    );
  }

  /** What qemu itself printed (errors). */
  get qemuOutput(): string {
    return this.output;
  }

  /** The serial console so far (kernel, systemd, cloud-init), across reboots. */
  consoleText(): string {
    const file = join(this.options.workDir, `${this.name}-console.log`);
    return existsSync(file) ? readFileSync(file, "utf8") : "";
  }

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Host port forwarded to `guestPort`. */
  hostPort(guestPort: number): number {
    const port = this.ports.get(guestPort);
    if (!port) throw new Error(`guest port ${guestPort} is not forwarded`);
    return port;
  }

  /**
   * ssh's options for the guest's root. One connection carries all of the test's commands (ssh's multiplexing: the first
   * command's ssh stays, MUX_PERSIST_SECONDS after the last): a connection of its own costs the emulated guest about
   * 1.7 core-seconds of key exchange and 1.4 s (docs/testing.md, Benchmarks), and the test runs hundreds. The socket is
   * this VM's own, in its directory; where that path is too long for a socket, each command connects by itself.
   */
  private sshOptions(): string[] {
    const socket = join(this.options.workDir, `${this.name}.ssh`);
    // A socket's path holds at most 107 bytes, and ssh binds a temporary name 17 bytes longer first.
    const mux =
      Buffer.byteLength(socket) <= 90
        ? ["-o", "ControlMaster=auto", "-o", `ControlPath=${socket}`, "-o", `ControlPersist=${MUX_PERSIST_SECONDS}`]
        : ["-o", "ControlMaster=no", "-o", "ControlPath=none"];
    return [
      "-i",
      this.options.image.sshKey,
      "-p",
      String(this.hostPort(22)),
      "-o",
      "StrictHostKeyChecking=no",
      "-o",
      "UserKnownHostsFile=/dev/null",
      "-o",
      "BatchMode=yes",
      "-o",
      "ConnectTimeout=10",
      "-o",
      "LogLevel=ERROR",
      "-o",
      "ServerAliveInterval=5",
      "-o",
      "ServerAliveCountMax=3",
      ...mux,
    ];
  }

  /** Runs a shell command in the guest as root over ssh; never throws on a non-zero exit. */
  ssh(command: string, options: { input?: string | Buffer; timeoutMs?: number } = {}): Promise<CommandResult> {
    return run("ssh", [...this.sshOptions(), "root@127.0.0.1", command], {
      input: options.input,
      timeoutMs: options.timeoutMs ?? 120_000,
    });
  }

  /** Ends the shared ssh connection, if one is up (bounded): once qemu is gone, nothing of this VM stays behind. */
  private async endSsh(): Promise<void> {
    await run("ssh", [...this.sshOptions(), "-O", "exit", "root@127.0.0.1"], { timeoutMs: 5000 }).catch(
      () => undefined,
    );
  }

  /** Like ssh(), but throws when the command fails; returns its stdout. */
  async sshOk(command: string, options: { input?: string | Buffer; timeoutMs?: number } = {}): Promise<string> {
    const result = await this.ssh(command, options);
    if (result.code !== 0) {
      throw new Error(
        `in ${this.name}: \`${command}\` failed (${result.code}): ${result.stderr}${result.stdout}${result.code === 255 ? this.unreachable() : ""}`,
      );
    }
    return result.stdout;
  }

  /** How qemu (its guard) ended: 137 is `timeout`'s SIGKILL at QEMU_LIFETIME_SECONDS. */
  private get exitStatus(): string {
    const status = this.child.exitCode ?? this.child.signalCode;
    return status === 137 ? `137: killed at its lifetime of ${QEMU_LIFETIME_SECONDS} s` : String(status);
  }

  /** Why ssh itself failed (its exit 255), as far as the host can tell: whether qemu runs, and what the guest last printed. */
  private unreachable(): string {
    const qemu = this.isRunning ? "qemu runs" : `qemu exited (${this.exitStatus})`;
    return `\n${qemu}; the last lines of the guest's console:\n${this.consoleText().trimEnd().split("\n").slice(-30).join("\n")}`;
  }

  /** Polls `probe` every `intervalMs` until it returns a value, qemu exits, or `timeoutMs` passes. */
  async waitFor<T>(
    what: string,
    probe: () => Promise<T | undefined>,
    timeoutMs: number,
    intervalMs = 2000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.isRunning)
        throw new Error(`${this.name}: qemu exited (${this.exitStatus}) while waiting for ${what}:\n${this.output}`);
      const value = await probe().catch(() => undefined);
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`${this.name}: no ${what} within ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  /** Waits until ssh answers; resolves with the guest's boot id. */
  waitForSsh(timeoutMs: number): Promise<string> {
    return this.waitFor(
      "ssh",
      async () => {
        const result = await this.ssh("cat /proc/sys/kernel/random/boot_id", { timeoutMs: 20_000 });
        return result.code === 0 ? result.stdout.trim() : undefined;
      },
      timeoutMs,
    );
  }

  /** One HTTP GET of a forwarded guest port from the host; undefined when nothing answers. */
  httpGet(guestPort: number, path = "/", timeoutMs = 10_000): Promise<{ status: number; body: string } | undefined> {
    return new Promise((resolvePromise) => {
      const req = http.get({ host: "127.0.0.1", port: this.hostPort(guestPort), path, timeout: timeoutMs }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolvePromise({ status: res.statusCode ?? 0, body }));
        res.on("error", () => resolvePromise(undefined));
      });
      req.on("timeout", () => req.destroy());
      req.on("error", () => resolvePromise(undefined));
    });
  }

  /** Waits for an HTTP 200 on a forwarded guest port; resolves with the body. */
  waitForHttp(guestPort: number, timeoutMs: number, path = "/"): Promise<string> {
    return this.waitFor(
      `HTTP 200 on guest port ${guestPort}`,
      async () => {
        const answer = await this.httpGet(guestPort, path);
        return answer?.status === 200 ? answer.body : undefined;
      },
      timeoutMs,
      1000,
    );
  }

  /** Reboots the guest (systemctl reboot) and waits for ssh on the new boot; resolves with its boot id. */
  async reboot(timeoutMs: number): Promise<string> {
    const before = await this.sshOk("cat /proc/sys/kernel/random/boot_id");
    await this.ssh("systemctl reboot", { timeoutMs: 20_000 });
    return this.waitFor(
      "ssh after the reboot",
      async () => {
        const result = await this.ssh("cat /proc/sys/kernel/random/boot_id", { timeoutMs: 20_000 });
        const id = result.stdout.trim();
        return result.code === 0 && id !== before.trim() ? id : undefined;
      },
      timeoutMs,
    );
  }

  /** Powers the guest off cleanly (bounded), then makes sure qemu is gone. */
  async shutdown(timeoutMs = 120_000): Promise<void> {
    if (!this.isRunning) return;
    await this.ssh("systemctl poweroff", { timeoutMs: 20_000 }).catch(() => undefined);
    const timer = setTimeout(() => killGroup(this.child), timeoutMs);
    await this.exited;
    clearTimeout(timer);
    await this.endSsh();
  }

  /** Kills qemu at once (as a host is destroyed); safe to call twice. */
  async kill(): Promise<void> {
    if (this.isRunning) killGroup(this.child);
    await this.exited;
    await this.endSsh();
  }
}

/** Size of a file in bytes (0 when it does not exist). */
export function fileSize(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}
