import { mkdtempSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import {
  closestKey,
  editDistance,
  RemovedSettingError,
  SettingsError,
  SettingsErrors,
  SettingsFileError,
} from "../../settings/errors";
import { HOST_FILES } from "../../settings/host-layout";
import {
  DEFAULT_SETTINGS_FILE,
  loadStackSettings,
  parseStackSettings,
  REMOVED_SETTINGS,
} from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";
import { settingsErrorOf } from "../support/synth";

const errorOf = settingsErrorOf;

describe("stack settings", () => {
  it("loads the example set shipped with the repository, with the original stack's production paths", () => {
    const settings = loadStackSettings(DEFAULT_SETTINGS_FILE);
    expect(settings).toMatchObject({ stackName: "CrmHostStack", instanceName: "CrmServer", region: "us-east-1" });
    expect(settings.provisioning).toMatchObject({
      appName: "crm",
      appDir: "/home/ec2-user/crm-app",
      loginUser: "ec2-user",
      loginHome: "/home/ec2-user",
      swapFile: "/swapfile",
      metadataEndpoint: "http://169.254.169.254",
    });
  });

  it("takes the secrets from the user data, as the original stack, unless parameter-store (aws/ssm by default)", () => {
    const settings = loadStackSettings(DEFAULT_SETTINGS_FILE);
    expect(settings.provisioning.secrets).toBe("user-data");
    expect(settings.secretsKmsKeyId).toBe("alias/aws/ssm");
    expect(parseStackSettings({ ...exampleSettings, secrets: "parameter-store" }).provisioning.secrets).toBe(
      "parameter-store",
    );
  });

  it("keeps the data volume on destroy unless deleteDataVolumeOnDestroy is true", () => {
    expect(loadStackSettings(DEFAULT_SETTINGS_FILE).deleteDataVolumeOnDestroy).toBe(false);
    expect(parseStackSettings({ ...exampleSettings, deleteDataVolumeOnDestroy: true }).deleteDataVolumeOnDestroy).toBe(
      true,
    );
    expect(parseStackSettings({ ...exampleSettings, deleteDataVolumeOnDestroy: false }).deleteDataVolumeOnDestroy).toBe(
      false,
    );
  });

  it("reads the file named by CRM_SETTINGS, and lets it override the production paths", () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-settings-"));
    const file = join(dir, "settings.json");
    writeFileSync(
      file,
      JSON.stringify({
        ...exampleSettings,
        stackName: "CrmStaging",
        loginUser: "admin",
        loginHome: "/home/admin",
        appDir: "/home/admin/crm",
      }),
    );
    const previous = process.env.CRM_SETTINGS;
    process.env.CRM_SETTINGS = file;
    try {
      const settings = loadStackSettings();
      expect(settings.stackName).toBe("CrmStaging");
      expect(settings.provisioning).toMatchObject({
        loginUser: "admin",
        loginHome: "/home/admin",
        appDir: "/home/admin/crm",
      });
    } finally {
      if (previous === undefined) delete process.env.CRM_SETTINGS;
      else process.env.CRM_SETTINGS = previous;
    }
  });

  it("refuses a key given twice, which JSON.parse would settle silently for the last one", () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-settings-"));
    const file = join(dir, "twice.json");
    writeFileSync(file, `{\n  "region": "us-east-1",\n  "stackName": "CrmHostStack",\n  "region": "eu-west-3"\n}\n`);
    expect(() => loadStackSettings(file)).toThrow(SettingsFileError);
    expect(() => loadStackSettings(file)).toThrow(
      `Cannot use the settings file ${file}: line 4, column 3: the key "region" appears twice in one object; expected each key once (keep one)`,
    );
  });

  it("names the file when it cannot be read or parsed", () => {
    expect(() => loadStackSettings("/nonexistent/settings.json")).toThrow(
      "Cannot use the settings file /nonexistent/settings.json: no such file",
    );
    const dir = mkdtempSync(join(tmpdir(), "crm-settings-"));
    writeFileSync(join(dir, "broken.json"), "{ not json");
    expect(() => loadStackSettings(join(dir, "broken.json"))).toThrow(
      /^Cannot use the settings file .*broken\.json: line 1, column 3: not valid JSON: expected a JSON value or punctuation/,
    );
    expect(() => loadStackSettings(dir)).toThrow(`Cannot use the settings file ${dir}: it is a directory`);
    expect(() => loadStackSettings(dir)).toThrow(SettingsFileError);
  });

  const rejections: [string, unknown, RegExp][] = [
    ["stackName", "crm stack", /Invalid setting "stackName" \(got "crm stack"\): expected a stack name/],
    ["stackName", "-crm", /Invalid setting "stackName"/],
    ["instanceName", "1server", /Invalid setting "instanceName" \(got "1server"\): expected .*PublicIP/],
    ["instanceName", "Crm.Server", /Invalid setting "instanceName"/],
    ["region", "US-EAST-1", /Invalid setting "region" \(got "US-EAST-1"\): expected an AWS region name/],
    ["appDir", "crm-app", /Invalid setting "appDir" \(got "crm-app"\): expected an absolute path/],
    ["appDir", "/home/ec2-user/../root/app", /Invalid setting "appDir"/],
    ["appDir", "/opt/crm", /Invalid setting "appDir"/],
    ["databaseName", "crm-db", /Invalid setting "databaseName" \(got "crm-db"\)/],
    ["databaseName", "crm`; DROP", /Invalid setting "databaseName"/],
    ["appDbUser", "app user", /Invalid setting "appDbUser" \(got "app user"\)/],
    ["appDbUser", "", /Invalid setting "appDbUser"/],
    ["repoUrl", "git@github.com:org/crm.git", /Invalid setting "repoUrl"/],
    ["repoUrl", "https://user:secret@github.com/org/crm.git", /Invalid setting "repoUrl"/],
    ["gitEmail", "not-an-email", /Invalid setting "gitEmail" \(got "not-an-email"\)/],
    ["gitUser", "Line\nbreak", /Invalid setting "gitUser"/],
    ["appName", "crm app", /Invalid setting "appName" \(got "crm app"\)/],
    ["loginUser", "Root User", /Invalid setting "loginUser"/],
    ["swapFile", "swapfile", /Invalid setting "swapFile"/],
    ["stackName", undefined, /Invalid setting "stackName"/],
    // A typo of a region, and regions that do not exist: the provider would fail at plan with AWS.
    [
      "region",
      "eu-wset-1",
      /Invalid setting "region" \(got "eu-wset-1"\): expected an AWS region name such as us-east-1, one that exists/,
    ],
    ["region", "us-east-9", /Invalid setting "region"/],
    ["region", "aws-global", /Invalid setting "region"/],
    // MariaDB's own schemas: the app user would get ALL on them (on mysql: root's hash, new users).
    [
      "databaseName",
      "mysql",
      /Invalid setting "databaseName" \(got "mysql"\): expected .*not one of MariaDB's own schemas/,
    ],
    ["databaseName", "information_schema", /Invalid setting "databaseName"/],
    ["databaseName", "performance_schema", /Invalid setting "databaseName"/],
    ["databaseName", "sys", /Invalid setting "databaseName"/],
    ["databaseName", "MySQL", /Invalid setting "databaseName"/],
    // Accounts MariaDB has or reserves: root would be "created" (it exists) and .env would hold a password it does not have.
    [
      "appDbUser",
      "root",
      /Invalid setting "appDbUser" \(got "root"\): expected .*not an account MariaDB creates or reserves/,
    ],
    ["appDbUser", "mysql", /Invalid setting "appDbUser"/],
    ["appDbUser", "PUBLIC", /Invalid setting "appDbUser"/],
    ["appDbUser", "mariadb.sys", /Invalid setting "appDbUser"/],
    // Units of the distribution, which <app>.service in /etc/systemd/system would shadow.
    ["appName", "mariadb", /Invalid setting "appName" \(got "mariadb"\): expected .*no unit of the distribution/],
    ["appName", "mysqld", /Invalid setting "appName"/],
    ["appName", "sshd", /Invalid setting "appName"/],
    ["appName", "nftables", /Invalid setting "appName"/],
    ["appName", "cloud-init", /Invalid setting "appName"/],
    ["appName", "cloud-final", /Invalid setting "appName"/],
    ["appName", "systemd-journald", /Invalid setting "appName"/],
    ["appName", "dbus", /Invalid setting "appName"/],
    ["appName", "amazon-ssm-agent", /Invalid setting "appName"/],
    // Paths where no swap file can live, or where it would sit among configuration, homes or data.
    [
      "swapFile",
      "/proc/swap",
      /Invalid setting "swapFile" \(got "\/proc\/swap"\): expected the swap file, apart from the system's own paths: it lies inside \/proc \(a file system of the kernel\)\.$/,
    ],
    ["swapFile", "/dev/sda", /Invalid setting "swapFile"/],
    ["swapFile", "/tmp/swapfile", /Invalid setting "swapFile"/],
    ["swapFile", "/run/swap", /Invalid setting "swapFile"/],
    ["swapFile", "/boot/swap", /Invalid setting "swapFile"/],
    ["swapFile", "/etc/passwd", /Invalid setting "swapFile"/],
    ["swapFile", "/home/ec2-user/crm-app/server.js", /Invalid setting "swapFile"/],
    ["swapFile", "/var/lib/mysql/ibdata1", /Invalid setting "swapFile"/],
    ["swapFile", "/usr", /Invalid setting "swapFile"/],
    ["swapFile", "/var", /Invalid setting "swapFile"/],
    [
      "deleteDataVolumeOnDestroy",
      "true",
      /Invalid setting "deleteDataVolumeOnDestroy" \(got "true"\): expected true or false/,
    ],
    ["deleteDataVolumeOnDestroy", 1, /Invalid setting "deleteDataVolumeOnDestroy" \(got 1\)/],
    ["secrets", "ssm", /Invalid setting "secrets" \(got "ssm"\): expected one of "user-data", "parameter-store"/],
    ["secrets", "Parameter-Store", /Invalid setting "secrets"/],
    [
      "secretsKmsKeyId",
      "aws/ssm",
      /Invalid setting "secretsKmsKeyId" \(got "aws\/ssm"\): expected a KMS key as alias\/<name>/,
    ],
    ["secretsKmsKeyId", "alias/my key", /Invalid setting "secretsKmsKeyId"/],
    [
      "secretsKmsKeyId",
      "arn:aws:kms:us-east-1:123:key/1234abcd-12ab-34cd-56ef-1234567890ab",
      /Invalid setting "secretsKmsKeyId"/,
    ],
  ];

  it.each([
    ["region", "eu-south-2"],
    ["region", "mx-central-1"],
    ["region", "us-gov-west-1"],
    ["region", "cn-north-1"],
    ["databaseName", "crm_mysql"],
    ["appDbUser", "rooted"],
    ["appName", "crm-mariadb-app"],
    ["appName", "sshd2"],
    ["swapFile", "/var/swapfile"],
    ["swapFile", "/swap/file"],
    ["secrets", "user-data"],
    ["secrets", "parameter-store"],
    ["secretsKmsKeyId", "alias/crm-host/secrets"],
    ["secretsKmsKeyId", "1234abcd-12ab-34cd-56ef-1234567890ab"],
    ["secretsKmsKeyId", "mrk-1234abcd12ab34cd56ef1234567890ab"],
    ["secretsKmsKeyId", "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"],
  ])("accepts %s = %j", (key, value) => {
    expect(parseStackSettings({ ...exampleSettings, [key]: value })).toBeTruthy();
  });
  it("accepts a key ARN of another partition with a region of that partition", () => {
    expect(
      parseStackSettings({
        ...exampleSettings,
        region: "us-gov-west-1",
        secretsKmsKeyId: "arn:aws-us-gov:kms:us-gov-west-1:123456789012:alias/crm-secrets",
      }),
    ).toBeTruthy();
  });
  it.each(rejections)("rejects %s = %j with a message naming it", (key, value, message) => {
    const raw: Record<string, unknown> = { ...exampleSettings, [key]: value };
    if (value === undefined) delete raw[key];
    expect(() => parseStackSettings(raw)).toThrow(SettingsError);
    expect(() => parseStackSettings(raw)).toThrow(message);
  });

  it("never echoes credentials found in a refused address", () => {
    const raw = { ...exampleSettings, repoUrl: "https://deploy:ghp_Secret123@github.com/org/crm.git" };
    expect(() => parseStackSettings(raw)).toThrow(
      'Invalid setting "repoUrl" (got "https://***@github.com/org/crm.git")',
    );
    expect(() => parseStackSettings(raw)).not.toThrow(/ghp_Secret123/);
  });

  it.each([
    "https://u:pa/SECRET@github.com/org/crm.git",
    "https://u:pa@SECRET@github.com/org/crm.git",
    "https://u:pa SECRET@github.com/org/crm.git",
    'https://u:pa"SECRET@github.com/org/crm.git',
    "https://u:pa\\SECRET@github.com/org/crm.git",
    "https://SECRET@github.com/org/crm.git",
    "u:paSECRET@github.com/org/crm.git",
    "ftp://u:pa/SECRET@github.com/org/crm.git",
  ])("prints no part of the user-info of the refused address %j", (repoUrl) => {
    const message = errorOf({ ...exampleSettings, repoUrl });
    expect(message).toMatch(
      /^Invalid setting "repoUrl" \(got "[a-z]*:?(\/\/)?\*\*\*@github\.com\/org\/crm\.git"\): expected/,
    );
    expect(message.slice(0, message.indexOf("): expected"))).not.toMatch(/SECRET|pa|u:/);
    expect(message).not.toContain("SECRET");
  });

  it("cuts a long value in the message, saying how long it was", () => {
    const message = errorOf({ ...exampleSettings, gitEmail: `${"x".repeat(5000)}@` });
    expect(message).toMatch(
      /^Invalid setting "gitEmail" \(got "x{79}… \(5003 characters\)\): expected an e-mail address/,
    );
    expect(message.length).toBeLessThan(300);
  });

  it("names the setting and what is expected when a value has the wrong type or is missing", () => {
    expect(() => parseStackSettings({ ...exampleSettings, stackName: 5 })).toThrow(
      'Invalid setting "stackName" (got 5): expected a stack name of 1 to 64 letters, digits or -, starting with a letter (not with aws or ssm, in any case, with "secrets": "parameter-store").',
    );
    expect(() => parseStackSettings({ ...exampleSettings, swapFile: ["/swapfile"] })).toThrow(
      /^Invalid setting "swapFile" \(got \["\/swapfile"\]\): expected an absolute path/,
    );
    const { gitEmail: _omitted, ...withoutEmail } = exampleSettings;
    expect(() => parseStackSettings(withoutEmail)).toThrow(
      /^Invalid setting "gitEmail": expected an e-mail address such as deploy@example.com .*\(the setting is required\)\.$/,
    );
  });

  it("reports a misspelt key with the key it is closest to, rather than the required setting it leaves out, and lists no keys", () => {
    const { databaseName, ...rest } = exampleSettings;
    expect(() => parseStackSettings({ ...rest, databseName: databaseName })).toThrow(
      new SettingsError("databseName", 'one of the known settings (did you mean "databaseName"?)'),
    );
    expect(() => parseStackSettings({ ...exampleSettings, Regoin: "eu-west-1" })).toThrow(
      'Invalid setting "Regoin": expected one of the known settings (did you mean "region"?).',
    );
    // Close to no key: the page that lists them, not the 30-odd keys.
    expect(() => parseStackSettings({ ...exampleSettings, colour: "blue" })).toThrow(
      'Invalid setting "colour": expected one of the known settings (docs/settings.md lists them).',
    );
  });

  it("names the known region a misspelt one is closest to, as for a key, and none when no region is close", () => {
    expect(() => parseStackSettings({ ...exampleSettings, region: "us-esat-1" })).toThrow(
      'Invalid setting "region" (got "us-esat-1"): expected an AWS region name such as us-east-1, one that ' +
        'exists (in the AWS SDK\'s list of regions; did you mean "us-east-1"?).',
    );
    expect(() => parseStackSettings({ ...exampleSettings, snapshotCopyRegion: "eu-wset-1" })).toThrow(
      /; did you mean "eu-west-1"\?\)\.$/,
    );
    expect(() => parseStackSettings({ ...exampleSettings, region: "US-EAST-1" })).toThrow(
      /; did you mean "us-east-1"\?\)\.$/,
    );
    expect(() => parseStackSettings({ ...exampleSettings, region: "mars-north-1" })).toThrow(
      /one that exists \(in the AWS SDK's list of regions\)\.$/,
    );
  });

  it("reports every mistake at once, one line each: removed and misspelt keys first, then each refused value", () => {
    const { databaseName: _omitted, ...rest } = exampleSettings;
    let problem: Error | undefined;
    try {
      parseStackSettings({ ...rest, region: "eu-wset-1", swapFile: 3, databseName: "crm", fstabFile: "/etc/fstab" });
    } catch (error) {
      problem = error as Error;
    }
    expect(problem).toBeInstanceOf(SettingsErrors);
    expect(problem?.message.split("\n")).toEqual([
      'The setting "fstabFile" is gone: the host\'s path /etc/fstab is a constant of the host, no longer a setting; remove it from the settings file (see CHANGELOG.md).',
      'Invalid setting "databseName": expected one of the known settings (did you mean "databaseName"?).',
      expect.stringMatching(/^Invalid setting "region" \(got "eu-wset-1"\): expected an AWS region name/),
      expect.stringMatching(/^Invalid setting "swapFile" \(got 3\): expected an absolute path/),
    ]);
    // A check across settings that a refused value breaks is not reported beside it: appDir is inside loginHome.
    expect(() => parseStackSettings({ ...exampleSettings, loginHome: "home/ec2-user" })).toThrow(
      /^Invalid setting "loginHome" \(got "home\/ec2-user"\): expected an absolute path[^\n]*$/,
    );
  });

  it.each([
    ["regoin", "region", 1],
    ["databseName", "databaseName", 1],
    ["region", "region", 0],
    ["ab", "ba", 1],
    ["kitten", "sitting", 3],
    ["", "abc", 3],
  ])("editDistance(%j, %j) = %d (a swap of neighbours is one edit)", (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });

  it("suggests a key only when it is close: at most 2 edits, or a third of a longer key", () => {
    expect(closestKey("bukket", ["type", "bucket", "key"])).toBe("bucket");
    expect(closestKey("email", ["hostedZone", "name"])).toBeUndefined();
    expect(closestKey("sshIngres", ["appName", "sshIngress"])).toBe("sshIngress");
  });

  it('accepts "$schema" (for editors) and leaves it out of the settings', () => {
    expect(exampleSettings.$schema).toBe("./stack-settings.schema.json");
    const settings = parseStackSettings(exampleSettings);
    expect(Object.keys(settings).sort()).toEqual([
      "alarmEmail",
      "backend",
      "deleteDataVolumeOnDestroy",
      "instanceName",
      "provisioning",
      "region",
      "secretsKmsKeyId",
      "snapshotCopyRegion",
      "stackName",
      "tags",
    ]);
    expect(settings.provisioning).not.toHaveProperty("$schema");
    expect(() => parseStackSettings({ ...exampleSettings, $schema: 1 })).toThrow(
      /Invalid setting "\$schema" \(got 1\): expected a string/,
    );
  });

  it("refuses unknown keys (typos) and files that are not a JSON object", () => {
    expect(() => parseStackSettings({ ...exampleSettings, databseName: "crm" })).toThrow(
      /Invalid setting "databseName": expected one of the known settings/,
    );
    expect(() => parseStackSettings(["CrmHostStack"])).toThrow(/expected a JSON object/);
    const { repoUrl: _omitted, ...withoutRepo } = exampleSettings;
    expect(() => parseStackSettings(withoutRepo)).toThrow(/Invalid setting "repoUrl"/);
  });

  it.each([
    ["deviceDirectory", "/dev"],
    ["fstabFile", "/etc/fstab"],
    ["databaseDir", "/var/lib/mysql"],
    ["unitDirectory", "/etc/systemd/system"],
    ["nftablesConfig", "/etc/sysconfig/nftables.conf"],
  ])(
    "tells a file that still names %s, with any value, that the setting is gone: the host's path %s is a constant",
    (setting, path) => {
      expect(REMOVED_SETTINGS[setting]).toBe(
        `the host's path ${HOST_FILES[setting as keyof typeof HOST_FILES]} is a constant of the host, no longer a setting`,
      );
      for (const value of [path, "/elsewhere", 3]) {
        let message = "";
        try {
          parseStackSettings({ ...exampleSettings, [setting]: value });
        } catch (error) {
          expect(error).toBeInstanceOf(RemovedSettingError);
          message = (error as Error).message;
        }
        expect(message).toBe(
          `The setting "${setting}" is gone: the host's path ${path} is a constant of the host, no longer a setting; ` +
            "remove it from the settings file (see CHANGELOG.md).",
        );
      }
    },
  );

  it.each(["caddyUrl", "caddySha512"])(
    "tells a file that still names domain.%s that it moved to the top level",
    (setting) => {
      const domain = { hostedZone: "example.com", name: "crm.example.com", [setting]: "x" };
      expect(() => parseStackSettings({ ...exampleSettings, domain })).toThrow(
        new RemovedSettingError(
          `domain.${setting}`,
          `set the top-level "${setting}" instead (every single host downloads Caddy, its front)`,
        ),
      );
      // The rest of the domain is read as usual: one line for this, none for the keys beside it.
      expect(() => parseStackSettings({ ...exampleSettings, domain })).toThrow(
        `The setting "domain.${setting}" is gone: set the top-level "${setting}" instead (every single host downloads Caddy, its front); ` +
          "remove it from the settings file (see CHANGELOG.md).",
      );
      expect(Object.keys(REMOVED_SETTINGS).filter((key) => key.includes("."))).toEqual([
        "domain.caddyUrl",
        "domain.caddySha512",
      ]);
    },
  );
});
