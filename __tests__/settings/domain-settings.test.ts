import { parseStackSettings } from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";
import { settingsErrorOf } from "../support/synth";
import {
  CADDY_DOWNLOAD_URL,
  CADDY_SHA512,
  CADDY_VERSION,
  LETS_ENCRYPT_DIRECTORY,
} from "../../settings/domain-settings";

const errorOf = settingsErrorOf;

const domain = { hostedZone: "example.com", name: "crm.example.com" };

describe("the domain and alarmEmail settings", () => {
  it("are absent from the example set: the original stack has neither", () => {
    const settings = parseStackSettings(exampleSettings);
    expect(settings.provisioning.domain).toBeUndefined();
    expect(settings.alarmEmail).toBeUndefined();
  });

  it("fill in Let's Encrypt and the pinned Caddy release (a top-level setting: every single host's front), and take a mirror of it", () => {
    const parsed = parseStackSettings({ ...exampleSettings, domain }).provisioning;
    expect(parsed.domain).toEqual({ ...domain, acmeDirectory: LETS_ENCRYPT_DIRECTORY });
    expect([parsed.caddyUrl, parsed.caddySha512]).toEqual([CADDY_DOWNLOAD_URL, CADDY_SHA512]);
    expect(CADDY_DOWNLOAD_URL).toBe(
      `https://github.com/caddyserver/caddy/releases/download/v${CADDY_VERSION}/caddy_${CADDY_VERSION}_linux_amd64.tar.gz`,
    );
    expect(CADDY_SHA512).toMatch(/^[0-9a-f]{128}$/);
    const staging = { ...domain, acmeDirectory: "https://acme-staging-v02.api.letsencrypt.org/directory" };
    const mirror = {
      caddyUrl: "https://mirror.example.com/caddy/caddy_linux_amd64.tar.gz",
      caddySha512: "a".repeat(128),
    };
    expect(parseStackSettings({ ...exampleSettings, domain: staging, ...mirror }).provisioning).toMatchObject({
      domain: staging,
      ...mirror,
    });
    // The zone's own name is a name in it too.
    expect(
      parseStackSettings({ ...exampleSettings, domain: { hostedZone: "example.com", name: "example.com" } })
        .provisioning.domain?.name,
    ).toBe("example.com");
  });

  it.each([
    [
      { ...domain, name: "crm.example.org" },
      'Invalid setting "domain.name" (got "crm.example.org"): expected a name in the hosted zone example.com (example.com or ending in .example.com).',
    ],
    [
      { ...domain, name: "crmexample.com" },
      'Invalid setting "domain.name" (got "crmexample.com"): expected a name in the hosted zone example.com',
    ],
    [
      { ...domain, hostedZone: "Example.com." },
      'Invalid setting "domain.hostedZone" (got "Example.com."): expected a lower-case DNS name',
    ],
    [
      { ...domain, name: "crm_app.example.com" },
      'Invalid setting "domain.name" (got "crm_app.example.com"): expected a lower-case DNS name',
    ],
    [
      { ...domain, acmeDirectory: "http://acme.example.com/directory" },
      'Invalid setting "domain.acmeDirectory" (got "http://acme.example.com/directory"): expected an https URL',
    ],
    [
      { ...domain, email: "x@example.com" },
      'Invalid setting "domain.email": expected one of the known settings (hostedZone, name, acmeDirectory).',
    ],
    [
      { name: "crm.example.com" },
      'Invalid setting "domain.hostedZone": expected a lower-case DNS name of two or more labels without the trailing dot, such as example.com (the setting is required).',
    ],
  ])("refuses the domain %j, naming the setting and what it expects", (value, message) => {
    expect(errorOf({ ...exampleSettings, domain: value })).toContain(message);
  });

  it("refuses a bad caddySha512, naming the setting", () => {
    expect(errorOf({ ...exampleSettings, caddySha512: "abc" })).toContain(
      'Invalid setting "caddySha512" (got "abc"): expected 128 lower-case hexadecimal digits (a SHA-512).',
    );
  });

  it("refuses a domain beside an app that binds port 80 itself: Caddy binds it", () => {
    expect(errorOf({ ...exampleSettings, domain, redirectHttpPort: false })).toBe(
      'Invalid setting "redirectHttpPort" (got false): expected true with a domain (the HTTPS server binds port 80 to redirect it; the app cannot bind it too).',
    );
  });

  it("takes an e-mail address for the alarms, and refuses anything else", () => {
    expect(parseStackSettings({ ...exampleSettings, alarmEmail: "ops@example.com" }).alarmEmail).toBe(
      "ops@example.com",
    );
    expect(errorOf({ ...exampleSettings, alarmEmail: "ops at example.com" })).toBe(
      'Invalid setting "alarmEmail" (got "ops at example.com"): expected an e-mail address such as ops@example.com, whose domain has labels of 1 to 63 letters, digits or - and at most 253 characters.',
    );
  });
});
