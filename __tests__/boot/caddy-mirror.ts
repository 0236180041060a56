/**
 * Caddy for the boot test's single hosts (A, B, C): Debian's caddy binary (2.6) in a tarball shaped like a release
 * (the binary at its top), served by the stand-in server at CADDY_MIRROR, and the settings' mirror option
 * (`caddyUrl`, `caddySha512`: the production default is the pinned release on GitHub, which this test cannot reach).
 * Hosts A and B get it through their ops tool's first action (ensure_front), host C through its first boot (HTTPS).
 */
import { createHash } from "crypto";
import { readFileSync } from "fs";
import { join } from "path";
import { ProvisioningSettings } from "../../settings/provisioning-settings";
import { StandInServer } from "./stand-ins";
import { run } from "./vm";

/** Where the settings' mirror option points the Caddy download (the stand-in server serves it). */
export const CADDY_MIRROR =
  "https://github.com/crm-boot-test/caddy-mirror/releases/download/debian/caddy_linux_amd64.tar.gz";

export interface CaddyMirror {
  readonly tarball: Buffer;
  readonly sha512: string;
}

/** Debian's caddy packed as a release into `dir`, and its SHA-512. */
export async function packDebianCaddy(dir: string): Promise<CaddyMirror> {
  const file = join(dir, "caddy_linux_amd64.tar.gz");
  const packed = await run("tar", ["-czf", file, "-C", "/usr/bin", "caddy"]);
  if (packed.code !== 0) throw new Error(`packing Debian's caddy failed: ${packed.stderr}`);
  const tarball = readFileSync(file);
  return { tarball, sha512: createHash("sha512").update(tarball).digest("hex") };
}

/** The stand-in server serves `mirror` at CADDY_MIRROR. */
export function serveCaddy(standIns: StandInServer, mirror: CaddyMirror): void {
  standIns.route(CADDY_MIRROR, (_req, res) =>
    res
      .writeHead(200, { "Content-Type": "application/gzip", "Content-Length": mirror.tarball.length })
      .end(mirror.tarball),
  );
}

/** `settings` with the mirror option pointing at `mirror`. */
export function withCaddyMirror(settings: ProvisioningSettings, mirror: CaddyMirror): ProvisioningSettings {
  return { ...settings, caddyUrl: CADDY_MIRROR, caddySha512: mirror.sha512 };
}

/** How many times a host downloaded the mirror so far. */
export function caddyDownloads(standIns: StandInServer): number {
  return standIns.requests.filter((r) => `https://${r.host}${r.path}` === CADDY_MIRROR && r.status === 200).length;
}
