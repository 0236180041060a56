/**
 * Host C of the boot test: a new host (fresh root disk, blank data disk) booted with the boot
 * settings plus a `domain`, so its user data carries the front's module (userdata/front.sh) for HTTPS.
 *
 * - Caddy comes from the settings' mirror option (caddy-mirror.ts).
 * - The ACME CA is the production default, Let's Encrypt's directory address: the guest resolves it
 *   to the stand-in server, which passes every request on to Pebble (Let's Encrypt's test CA) with
 *   its Host, so Pebble's URLs keep that name. Pebble resolves the site's name through its DNS
 *   stand-in to 127.0.0.1 and validates the challenge through the ports forwarded to the guest.
 * - The first boot must wait for the Elastic IP: the metadata stand-in reports another address
 *   until the test "associates" the Elastic IP, as EC2 does once the instance runs.
 * Checked from outside the VM: a TLS client that trusts only Pebble's root, port 80's redirect, the
 * back end on 3000, .env, and after a reboot the same certificate (same serial, no new order).
 */
import { randomBytes } from "crypto";
import { mkdirSync, readFileSync } from "fs";
import * as http from "http";
import * as https from "https";
import { join } from "path";
import * as tls from "tls";
import { parseStackSettings } from "../../settings/stack-settings";
import { LETS_ENCRYPT_DIRECTORY } from "../../settings/domain-settings";
import { CaddyMirror, caddyDownloads, withCaddyMirror } from "./caddy-mirror";
import { Pebble } from "./pebble";
import { StandInServer } from "./stand-ins";
import { MotoServer } from "../support/moto-server";
import { stepTimes } from "./boot-run";
import { bootModulePath, engineUserData, readBackRow } from "./user-data";
import { Accelerator, BootImage, createDisk, createOverlay, createSeedIso, Vm } from "./vm";

/** What host C needs from the boot test that runs it. */
export interface HostCContext {
  readonly engine: string;
  /** moto's server, whose EC2 host C's user data goes through (user-data.ts). */
  readonly moto: MotoServer;
  readonly image: BootImage;
  readonly accel: Accelerator;
  readonly standIns: StandInServer;
  /** The boot test's private directory: host C's files go to `<work>/host-c`. */
  readonly work: string;
  /** The boot test's settings file; host C adds the domain. */
  readonly settingsFile: string;
  readonly secrets: Record<string, string>;
  /** Debian's Caddy, which the stand-in server serves (caddy-mirror.ts). */
  readonly caddy: CaddyMirror;
  /** Records a figure of the boot test; throws when it is not ok. */
  readonly figure: (name: string, value: string, ok: boolean) => void;
}

const SITE = "crm.example.org";
const ZONE = "example.org";
/** The Elastic IP of host C, and what the metadata service reports before it is associated. */
const ELASTIC_IP = "198.51.100.77";
const ELASTIC_DNS = "ec2-198-51-100-77.compute-1.amazonaws.com";
const DATA_VOLUME_ID = "vol-0c1d2e3f405162738";
const ACME_HOST = new URL(LETS_ENCRYPT_DIRECTORY).host;
/** Let's Encrypt's staging CA, which Caddy turns to for its retries after a failed order. */
const ACME_STAGING_HOST = "acme-staging-v02.api.letsencrypt.org";
const FIRST_BOOT_LIMIT_MS = 15 * 60_000;
const REBOOT_LIMIT_MS = 8 * 60_000;
const CERTIFICATE_LIMIT_MS = 5 * 60_000;
const ROWS = ["customer 1 Ada Lovelace", "customer 2 Grace Hopper", "customer 3 Linus Torvalds"];

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One GET of a forwarded guest port, with the site's name as Host (and as SNI, over TLS, trusting only `ca`). */
function get(vm: Vm, guestPort: number, secure?: { ca: string }): Promise<Answer | undefined> {
  return new Promise((resolve) => {
    const options = {
      host: "127.0.0.1",
      port: vm.hostPort(guestPort),
      path: "/",
      headers: { host: SITE },
      timeout: 10_000,
    };
    const done = (res: http.IncomingMessage) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on("error", () => resolve(undefined));
    };
    const req = secure ? https.get({ ...options, servername: SITE, ca: [secure.ca] }, done) : http.get(options, done);
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
  });
}

interface Served {
  readonly authorized: boolean;
  readonly why: string;
  readonly serial: string;
  readonly issuer: string;
  readonly names: string;
}

/** The certificate the guest serves for the site on 443, judged against Pebble's root only. */
function servedCertificate(vm: Vm, ca: string): Promise<Served | undefined> {
  return new Promise((resolve) => {
    const socket = tls.connect(
      {
        host: "127.0.0.1",
        port: vm.hostPort(443),
        servername: SITE,
        ca: [ca],
        rejectUnauthorized: false,
        timeout: 10_000,
      },
      () => {
        const cert = socket.getPeerCertificate();
        resolve({
          authorized: socket.authorized,
          why: String(socket.authorizationError ?? ""),
          serial: cert.serialNumber ?? "",
          issuer: cert.issuer?.CN ?? "",
          names: cert.subjectaltname ?? "",
        });
        socket.end();
      },
    );
    socket.on("timeout", () => socket.destroy());
    socket.on("error", () => resolve(undefined));
  });
}

/** Orders the guest placed with the CA (through the stand-in). */
function orders(standIns: StandInServer): number {
  return standIns.requests.filter(
    (r) => [ACME_HOST, ACME_STAGING_HOST].includes(r.host) && r.method === "POST" && r.path.includes("order-plz"),
  ).length;
}

export async function hostC(ctx: HostCContext): Promise<void> {
  const { figure, standIns } = ctx;
  const dir = join(ctx.work, "host-c");
  mkdirSync(dir);

  const settings = withCaddyMirror(
    parseStackSettings({
      ...JSON.parse(readFileSync(ctx.settingsFile, "utf8")),
      domain: { hostedZone: ZONE, name: SITE },
    }).provisioning,
    ctx.caddy,
  );
  const downloadsBefore = caddyDownloads(standIns);
  const readBack = await engineUserData(
    { engine: ctx.engine, moto: ctx.moto },
    settings,
    ctx.secrets,
    DATA_VOLUME_ID,
    ELASTIC_IP,
    undefined,
    bootModulePath("host-c"),
  );
  const userData = readBack.bytes;
  figure(...readBackRow("host C: ", readBack));
  figure(
    "host C: user data with the front's module (HTTPS)",
    `${userData.length} bytes, ACME directory ${settings.domain?.acmeDirectory}`,
    settings.domain?.acmeDirectory === LETS_ENCRYPT_DIRECTORY,
  );

  const root = await createOverlay(ctx.image, join(dir, "root.qcow2"));
  const data = {
    file: await createDisk(join(dir, "data-volume.raw"), "1G"),
    serial: DATA_VOLUME_ID.replace("-", ""),
    bus: "nvme" as const,
  };
  const seed = await createSeedIso(
    join(dir, "seed.iso"),
    userData,
    `instance-id: i-${randomBytes(9).toString("hex").slice(0, 17)}\nlocal-hostname: ip-172-31-20-7\n`,
  );
  const vm = await Vm.boot({
    image: ctx.image,
    accel: ctx.accel,
    rootDisk: root,
    seedIso: seed,
    workDir: dir,
    name: "host-c",
    guestPorts: [80, 443, 3000],
    standInPort: standIns.port,
    removeOnAbort: ctx.work,
    drives: [data],
  });
  let pebble: Pebble | undefined;
  let ca = "";
  try {
    // Pebble validates through the forwards of the guest's 80 and 443, known only now.
    ca = await startPebble();
    const log = settings.logFile;
    // Until "associated", the metadata service reports the image's own address (203.0.113.25).
    await vm.waitForSsh(FIRST_BOOT_LIMIT_MS);
    await vm.waitFor(
      "the first boot to wait for the Elastic IP",
      async () =>
        (await vm.ssh(`grep -c 'not yet the Elastic IP ${ELASTIC_IP}' ${log}`)).stdout.trim() !== "0"
          ? true
          : undefined,
      FIRST_BOOT_LIMIT_MS,
      5000,
    );
    await vm.sshOk(
      `echo ${ELASTIC_IP} >/etc/imds-standin/public-ipv4 && echo ${ELASTIC_DNS} >/etc/imds-standin/public-hostname`,
    );
    await vm.waitForHttp(3000, FIRST_BOOT_LIMIT_MS);
    await vm.ssh("timeout 300 cloud-init status --wait", { timeoutMs: 320_000 });
    const provisioning = await vm.sshOk(`cat ${log}`);
    figure(
      "host C: first boot waited for the Elastic IP",
      /public hostname: ec2-198-51-100-77\./.test(provisioning)
        ? `then read ${ELASTIC_DNS}`
        : "did not read the Elastic IP's name",
      /public hostname: ec2-198-51-100-77\./.test(provisioning),
    );
    const steps = (provisioning.match(/ DONE step_\d\d_/g) ?? []).length;
    const httpsDone = / DONE install_front$/m.test(provisioning);
    const errors = provisioning
      .split("\n")
      .filter((line) => / (ERROR|FAILED)/.test(line))
      .slice(-2)
      .join(" / ");
    figure(
      "host C: provisioning",
      `${steps} of 15 steps, install_front ${httpsDone ? "done" : `NOT done: ${errors}`}`,
      steps === 15 && httpsDone,
    );
    figure("host C: provisioning's time (its log)", stepTimes(provisioning), true);
    const downloaded = caddyDownloads(standIns) - downloadsBefore;
    const installed = /Caddy installed: v?2\./.test(provisioning);
    figure(
      "host C: Caddy from the mirror, checked by SHA-512",
      `${downloaded} download(s), ${installed ? "installed" : "NOT installed"}`,
      downloaded >= 1 && installed,
    );

    const started = Date.now();
    const first = await certificate("a certificate Pebble issued");
    figure(
      "host C: HTTPS certificate from Pebble, verified against its root only",
      `serial ${first.serial}, issuer "${first.issuer}", ${first.names}, after ${((Date.now() - started) / 1000).toFixed(0)} s`,
      first.authorized && first.names.includes(`DNS:${SITE}`),
    );
    const secure = await get(vm, 443, { ca });
    const rows = ROWS.filter((row) => secure?.body.includes(row)).length;
    figure(
      "host C: HTTPS on 443",
      secure ? `${secure.status}, ${rows} of ${ROWS.length} rows` : "no answer",
      secure?.status === 200 && rows === ROWS.length && secure.body.includes(`FRONTENDURI https://${SITE}\n`),
    );
    const plain = await get(vm, 80);
    figure(
      "host C: port 80 redirects to HTTPS",
      plain ? `${plain.status} to ${plain.headers.location}` : "no answer",
      plain !== undefined && [301, 308].includes(plain.status) && plain.headers.location === `https://${SITE}/`,
    );
    const backEnd = await vm.httpGet(3000);
    figure(
      "host C: back end on 3000 (HTTP, as in the original stack)",
      backEnd ? `${backEnd.status}` : "no answer",
      backEnd?.status === 200,
    );
    const env = await vm.sshOk(`grep -E '^(FRONTENDURI|BACKENDURI)=' ${settings.appDir}/.env`);
    figure(
      "host C: .env addresses on the domain",
      env.trim().replace(/\n/g, ", "),
      env === `FRONTENDURI=https://${SITE}\nBACKENDURI=http://${SITE}:3000\n`,
    );

    const ordered = orders(standIns);
    await vm.reboot(REBOOT_LIMIT_MS);
    await vm.waitForHttp(3000, REBOOT_LIMIT_MS);
    const again = await certificate("HTTPS after the reboot");
    figure(
      "host C: after reboot, the same certificate",
      `serial ${again.serial}, orders ${ordered} -> ${orders(standIns)}`,
      again.serial === first.serial && orders(standIns) === ordered && ordered >= 1,
    );

    const texts = [
      vm.consoleText(),
      await vm.sshOk(`cat ${log}`),
      (await vm.ssh("journalctl --no-pager -o cat -u caddy.service")).stdout,
    ];
    const forms = Object.values(ctx.secrets).flatMap((s) => [
      s,
      encodeURIComponent(s),
      Buffer.from(s).toString("base64"),
      Buffer.from(s).toString("hex"),
    ]);
    const leaked = texts.some((text) => forms.some((form) => text.includes(form)));
    figure("host C: secrets in console, provisioning log and Caddy's journal", leaked ? "found" : "none", !leaked);
  } finally {
    await vm.kill();
    await pebble?.stop();
  }

  /** Waits for a certificate the guest serves that Pebble's root verifies; says what Caddy and Pebble logged if none comes. */
  async function certificate(what: string): Promise<Served> {
    try {
      return await vm.waitFor(
        what,
        async () => {
          const served = await servedCertificate(vm, ca);
          return served?.authorized ? served : undefined;
        },
        CERTIFICATE_LIMIT_MS,
        5000,
      );
    } catch (error) {
      const caddy = (await vm.ssh("journalctl --no-pager -o cat -n 15 -u caddy.service")).stdout;
      throw new Error(`${(error as Error).message}\nCaddy:\n${caddy}\nPebble:\n${pebble?.log().slice(-3000)}`, {
        cause: error,
      });
    }
  }

  /** Starts Pebble, routes the ACME directory's host to it, and returns its root (the only CA the checks trust). */
  async function startPebble(): Promise<string> {
    pebble = await Pebble.start({
      dir,
      httpPort: vm.hostPort(80),
      tlsPort: vm.hostPort(443),
      names: [ACME_HOST, ACME_STAGING_HOST],
    });
    const server = pebble;
    for (const host of [ACME_HOST, ACME_STAGING_HOST]) {
      standIns.route(`https://${host}/`, (req, res) => {
        // Let's Encrypt's directory is /directory, Pebble's /dir; every other address comes from the directory.
        if (req.url === "/directory") req.url = "/dir";
        server.proxy(req, res);
      });
    }
    return server.rootCertificate();
  }
}
