import { CADDY_DOWNLOAD_URL, CADDY_SHA512 } from "../../settings/domain-settings";
import { SettingsError } from "../../settings/errors";
import {
  PRODUCTION_PATHS,
  PROVISIONING_DEFAULTS,
  ProvisioningSettings,
  validateProvisioningSettings,
} from "../../settings/provisioning-settings";
import { PRODUCTION_SETTINGS } from "../userdata/fixtures";

function errorOf(settings: ProvisioningSettings, prefix?: string): SettingsError {
  try {
    validateProvisioningSettings(settings, prefix);
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return error as SettingsError;
  }
  throw new Error("expected a SettingsError");
}

describe("validateProvisioningSettings", () => {
  test("accepts the production settings and keeps the original stack's production paths", () => {
    expect(() => validateProvisioningSettings(PRODUCTION_SETTINGS)).not.toThrow();
    expect(PRODUCTION_PATHS).toEqual({
      loginUser: "ec2-user",
      loginHome: "/home/ec2-user",
      swapFile: "/swapfile",
      logFile: "/var/log/crm-provisioning.log",
      metadataEndpoint: "http://169.254.169.254",
      dataMount: "/var/lib/crm-data",
      dataVolumeWaitSeconds: 300,
      scriptDirectory: "/usr/local/sbin",
    });
    expect(PROVISIONING_DEFAULTS).toEqual({
      redirectHttpPort: true,
      secrets: "user-data",
      topology: "single-host",
      healthCheckPath: "/",
      caddyUrl: CADDY_DOWNLOAD_URL,
      caddySha512: CADDY_SHA512,
    });
  });

  const bad: [keyof ProvisioningSettings, unknown, RegExp][] = [
    ["appName", "crm app", /systemd unit name/],
    ["appName", "../crm", /systemd unit name/],
    ["appName", "crm@1", /systemd unit name/],
    ["appName", "", /systemd unit name/],
    ["appName", "1crm", /starting with a letter/],
    ["appName", "counter", /no nftables keyword/],
    ["appName", "redirect", /no nftables keyword/],
    ["appName", "auto-merge", /no nftables keyword/],
    ["appName", "filter", /nor a table of the distribution/],
    ["appName", "firewalld", /nor a table of the distribution/],
    ["appDir", "crm-app", /absolute path/],
    ["appDir", "/opt/crm-app", /a directory inside loginHome \/home\/ec2-user \(the login user's home\)/],
    ["appDir", "/home/ec2-user", /a directory inside loginHome/],
    [
      "appDir",
      "/home/ec2-user/.nvm/app",
      /apart from the login user's own files: it lies inside \/home\/ec2-user\/.nvm \(nvm and Node.js/,
    ],
    ["appDir", "/home/ec2-user/.ssh", /it is \/home\/ec2-user\/.ssh \(the login user's SSH keys/],
    ["appDir", "/home/ec2-user/../root", /absolute path/],
    ["repoUrl", "http://github.com/org/app.git", /https address/],
    ["repoUrl", "https://user:pass@github.com/org/app.git", /https address/],
    ["repoUrl", "https://ghp_x@github.com/org/app.git", /https address/],
    ["repoUrl", "https://github.com/org/app.git?x='1'", /https address/],
    ["repoUrl", "https://github.com", /https address/],
    ["repoUrl", "https://github.com:99999/org/app.git", /port from 1 to 65535/],
    ["repoUrl", "https://github.com:0/org/app.git", /port from 1 to 65535/],
    ["repoUrl", "https://git..example.com/org/app.git", /labels of 1 to 63/],
    ["repoUrl", "https://-git.example.com/org/app.git", /labels of 1 to 63/],
    ["repoUrl", `https://${"a".repeat(64)}.example.com/org/app.git`, /labels of 1 to 63/],
    ["repoUrl", "https://github.com/org/../app.git", /no \. or \.\. segment/],
    ["repoUrl", "https://github.com/org/./app.git", /no \. or \.\. segment/],
    ["databaseName", "crm-db", /MariaDB database name/],
    ["databaseName", "a".repeat(65), /MariaDB database name/],
    ["databaseName", "crm`; DROP", /MariaDB database name/],
    ["appDbUser", "crm'app", /MariaDB user name/],
    ["appDbUser", "a".repeat(33), /MariaDB user name/],
    ["appDbUser", "", /MariaDB user name/],
    ["gitUser", "line\nbreak", /printable characters that git keeps/],
    ["gitUser", "", /printable characters that git keeps/],
    ["gitUser", "Deploy Bot <bot>", /no < or >/],
    ["gitUser", "Deploy Inc.", /not starting or ending with a space or one of/],
    ["gitUser", " Deploy", /not starting or ending with a space/],
    ["gitEmail", "deploy", /e-mail address/],
    ["gitEmail", "deploy@example.com\n", /e-mail address/],
    ["gitEmail", "a b@example.com", /e-mail address/],
    ["loginUser", "Ec2-User", /Linux user name/],
    ["loginUser", "ec2 user", /Linux user name/],
    ["loginUser", "-ec2", /Linux user name/],
    ["loginHome", "home/ec2-user", /absolute path/],
    ["swapFile", "swapfile", /absolute path/],
    ["swapFile", "/swap file", /absolute path/],
    ["logFile", "/var/log/../x.log", /absolute path/],
    ["metadataEndpoint", "http://169.254.169.254/", /the address of a metadata service/],
    ["metadataEndpoint", "ftp://169.254.169.254", /the address of a metadata service/],
    ["metadataEndpoint", "https://169.254.169.254", /the address of a metadata service/],
    ["metadataEndpoint", "http://instance-data", /not a host name/],
    ["metadataEndpoint", "http://169.254.169.254:0", /port from 1 to 65535/],
    ["metadataEndpoint", "http://[fd00:ec2::254:x]", /IPv6 in brackets/],
    ["metadataEndpoint", "http://169.254.169.0254", /IPv4/],
    ["scriptDirectory", "", /absolute path/],
    ["redirectHttpPort", "yes", /true or false/],
    ["healthCheckPath", "health", /a path starting with \//],
    ["healthCheckPath", "/health check", /a path starting with \//],
    ["healthCheckPath", "/health#x", /a path starting with \//],
    ["healthCheckPath", "/x'$(id)", /a path starting with \//],
    ["metadataEndpoint", "http://u:p@169.254.169.254", /the address of a metadata service/],
    ["dataMount", "/var/lib/crm data", /absolute path/],
    ["dataMount", "/home/ec2-user", /it is also loginHome \/home\/ec2-user \(the login user's home\)/],
    ["swapFile", "/home/ec2-user/crm-app/swap", /it lies inside loginHome/],
    ["logFile", "/var/lib/crm-data/provision.log", /it lies inside dataMount \/var\/lib\/crm-data/],
    ["dataVolumeWaitSeconds", 0, /whole number of seconds from 1 to 3600/],
    ["dataVolumeWaitSeconds", 2.5, /whole number of seconds from 1 to 3600/],
    ["dataVolumeWaitSeconds", "300", /whole number of seconds from 1 to 3600/],
  ];

  test.each(bad)("rejects %s = %j, naming the setting and what is expected", (field, value, expected) => {
    const error = errorOf({ ...PRODUCTION_SETTINGS, [field]: value } as ProvisioningSettings);
    expect(error.setting).toBe(field);
    expect(error.expected).toMatch(expected);
    expect(error.message).toContain(`"${field}"`);
  });

  test("rejects a missing setting", () => {
    const { gitEmail: _omitted, ...rest } = PRODUCTION_SETTINGS;
    expect(errorOf(rest as ProvisioningSettings).setting).toBe("gitEmail");
  });

  test("prefixes the setting name", () => {
    expect(errorOf({ ...PRODUCTION_SETTINGS, swapFile: "x" }, "provisioning.").setting).toBe("provisioning.swapFile");
  });

  test("accepts reasonable variations", () => {
    for (const variation of [
      { repoUrl: "https://gitlab.example.com:8443/group/sub/app" },
      { appName: "crm-app.v2", databaseName: "a".repeat(64), appDbUser: "a".repeat(32) },
      { loginUser: "app_user", loginHome: "/srv/app_user", appDir: "/srv/app_user/a/b" },
      { metadataEndpoint: "http://[fd00:ec2::254]" },
      { metadataEndpoint: "http://127.0.0.1:8080" },
      { gitUser: 'O\'Brien "Deploy" $bot' },
    ]) {
      expect(() => validateProvisioningSettings({ ...PRODUCTION_SETTINGS, ...variation })).not.toThrow();
    }
  });
});
