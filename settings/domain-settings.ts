/**
 * The optional `domain` setting: a name in a Route 53 public hosted zone under which the host serves
 * HTTPS (constructs/site-domain.ts for the record, userdata/front.sh for the TLS server). Without it
 * the stack serves the original stack's plain HTTP on the instance's public DNS name, and holds none of this.
 */
import { z } from "zod";
import { isHostName, isPort } from "./grammars";
import { APP_PORT } from "./ports";
import { matching, text } from "./rules";

/** The ACME directory Caddy gets certificates from by default: Let's Encrypt's. */
export const LETS_ENCRYPT_DIRECTORY = "https://acme-v02.api.letsencrypt.org/directory";
/**
 * The front of a single host, and the TLS server of one with a domain: Caddy (HTTPS with certificates from an ACME CA,
 * renewed on its own, and port 80 redirected), which Amazon Linux 2023 does not package. The release and its
 * SHA-512 are the ones the official caddy Docker image pins in caddyserver/caddy-docker's 2.11/alpine/Dockerfile
 * (x86_64, binArch amd64): a checksum published apart from the download.
 */
export const CADDY_VERSION = "2.11.4";
export const CADDY_DOWNLOAD_URL = `https://github.com/caddyserver/caddy/releases/download/v${CADDY_VERSION}/caddy_${CADDY_VERSION}_linux_amd64.tar.gz`;
export const CADDY_SHA512 =
  "8220d1f013b6f27510247b2360c9e0ca9f018feebd82515f07635318b34ff9777ccc8fd0b6e6f2486ce3a33fe389fbb7db12d05baa474f4587509fb4f5ebf1c9";

/** A DNS name of at least two labels, lower case, without the trailing dot; at most 253 characters. */
const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;
const DNS_NAME_EXPECTED = "a lower-case DNS name of two or more labels without the trailing dot, such as example.com";
const HTTPS_URL = /^https:\/\/[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(\/[A-Za-z0-9._~%+-]+)*\/?$/;

/** Whether an https URL of HTTPS_URL's shape has a host name of DNS's limits and a port from 1 to 65535. */
function hasHostAndPort(url: string): boolean {
  const [, host, port] = /^https:\/\/([^/:]+)(?::([^/]*))?/.exec(url) ?? [];
  return host !== undefined && isHostName(host) && (port === undefined || isPort(port));
}

/** An https URL setting: the shape as a pattern (for editors), the host's limits and the port's range by refinement. */
function httpsUrl(description: string, expected: string) {
  const words = `${expected} (a host name of labels of 1 to 63 letters, digits or -, an optional port from 1 to 65535)`;
  return text(description, words, (schema) =>
    schema.regex(HTTPS_URL, { error: words }).refine(hasHostAndPort, { error: words }),
  );
}

/** The longest name ACM takes as a certificate's first name (its subject's common name): 64 octets. */
export const MAX_CERTIFICATE_NAME_LENGTH = 64;

/** Whether an ACME directory is Let's Encrypt's (production or staging), which validates over the public internet. */
export function isLetsEncrypt(directory: string): boolean {
  return /^https:\/\/[a-z0-9.-]*\.api\.letsencrypt\.org(\/|$)/.test(directory);
}

/**
 * Where a single host gets Caddy, its front (userdata/front.sh: every request to the public ports passes through it, so
 * that a release holds requests instead of failing them) and, with a `domain`, its HTTPS server. Top-level settings.
 */
export const CADDY_FIELDS = {
  caddyUrl: httpsUrl(
    "Where a single host downloads Caddy, its front (a release, rollback or restart holds requests instead of failing " +
      "them) and HTTPS server: a release tarball (linux amd64). The default is the pinned release on GitHub; set it to a mirror of your " +
      "own (and `caddySha512` to its checksum if the file differs).",
    "an https URL of a Caddy release tarball (caddy_<version>_linux_amd64.tar.gz)",
  ).default(CADDY_DOWNLOAD_URL),
  caddySha512: matching(
    "SHA-512 of that tarball, checked before anything of it runs (default: the pinned release's).",
    /^[0-9a-f]{128}$/,
    "128 lower-case hexadecimal digits (a SHA-512)",
  ).default(CADDY_SHA512),
} as const;

/** The `domain` object of a settings file. */
export const domainSettingsSchema = z
  .strictObject({
    hostedZone: matching(
      "Name of the Route 53 public hosted zone that holds the record (created beforehand, its name servers " +
        "delegated), such as `example.com`.",
      DNS_NAME,
      DNS_NAME_EXPECTED,
    ),
    name: matching(
      "The site's name: an A record in `hostedZone` pointing at the host's Elastic IP, served over HTTPS " +
        `(FRONTENDURI \`https://<name>\`, BACKENDURI \`http://<name>:${APP_PORT}\`), such as \`crm.example.com\` or the zone's own name.`,
      DNS_NAME,
      `${DNS_NAME_EXPECTED.replace("example.com", "crm.example.com")}, in hostedZone; with "topology": "scale-out" at most ` +
        `${MAX_CERTIFICATE_NAME_LENGTH} characters (ACM's longest first name of a certificate)`,
    ),
    acmeDirectory: httpsUrl(
      "Directory URL of the ACME CA that issues and renews the certificate (default: Let's Encrypt; " +
        "its staging directory `https://acme-staging-v02.api.letsencrypt.org/directory` for trials).",
      "an https URL of an ACME directory, such as https://acme-v02.api.letsencrypt.org/directory",
    ).default(LETS_ENCRYPT_DIRECTORY),
  })
  .check((ctx) => {
    const { hostedZone, name } = ctx.value;
    if (name !== hostedZone && !name.endsWith(`.${hostedZone}`)) {
      ctx.issues.push({
        code: "custom",
        path: ["name"],
        input: name,
        message: `a name in the hosted zone ${hostedZone} (${hostedZone} or ending in .${hostedZone})`,
      });
    }
  })
  .meta({
    description:
      "Serve the app over HTTPS on a name of your own (default: none, plain HTTP on the instance's DNS name).",
  });

/** The optional `alarmEmail` setting. */
export const alarmEmailSchema = matching(
  "E-mail address told through SNS when an alarm of the stack fires or clears (the host's " +
    "status checks, health, disks and memory; the scale-out topology's load balancer and database) (AWS sends a confirmation message " +
    "first). Default: none, the alarms still recover and reboot the host and show in the CloudWatch console.",
  // The domain within DNS's limits (labels of 63, names of 253 octets): mail to any other is never delivered.
  /^[A-Za-z0-9._%+-]{1,64}@(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/,
  "an e-mail address such as ops@example.com, whose domain has labels of 1 to 63 letters, digits or - and at most 253 characters",
);
