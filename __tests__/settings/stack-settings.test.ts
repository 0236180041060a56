import { mkdtempSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { SettingsError } from "../../settings/errors";
import { DEFAULT_SETTINGS_FILE, loadStackSettings, parseStackSettings } from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";

describe("stack settings", () => {
  it("loads the example set shipped with the repository, with the spec's production paths", () => {
    const settings = loadStackSettings(DEFAULT_SETTINGS_FILE);
    expect(settings).toMatchObject({ stackName: "CrmHostStack", instanceName: "CrmServer", region: "us-east-1" });
    expect(settings.provisioning).toMatchObject({
      appName: "crm",
      appDir: "/home/ec2-user/crm-app",
      loginUser: "ec2-user",
      loginHome: "/home/ec2-user",
      unitDirectory: "/etc/systemd/system",
      swapFile: "/swapfile",
      metadataEndpoint: "http://169.254.169.254",
    });
  });

  it("reads the file named by CRM_SETTINGS, and lets it override the production paths", () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-settings-"));
    const file = join(dir, "settings.json");
    writeFileSync(file, JSON.stringify({ ...exampleSettings, stackName: "CrmStaging", loginUser: "admin", loginHome: "/home/admin", appDir: "/home/admin/crm" }));
    const previous = process.env.CRM_SETTINGS;
    process.env.CRM_SETTINGS = file;
    try {
      const settings = loadStackSettings();
      expect(settings.stackName).toBe("CrmStaging");
      expect(settings.provisioning).toMatchObject({ loginUser: "admin", loginHome: "/home/admin", appDir: "/home/admin/crm" });
    } finally {
      if (previous === undefined) delete process.env.CRM_SETTINGS; else process.env.CRM_SETTINGS = previous;
    }
  });

  it("names the file when it cannot be read or parsed", () => {
    expect(() => loadStackSettings("/nonexistent/settings.json")).toThrow(/Cannot read the settings file \/nonexistent\/settings\.json/);
    const dir = mkdtempSync(join(tmpdir(), "crm-settings-"));
    writeFileSync(join(dir, "broken.json"), "{ not json");
    expect(() => loadStackSettings(join(dir, "broken.json"))).toThrow(/Cannot read the settings file .*broken\.json/);
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
  ];
  it.each(rejections)("rejects %s = %j with a message naming it", (key, value, message) => {
    const raw: Record<string, unknown> = { ...exampleSettings, [key]: value };
    if (value === undefined) delete raw[key];
    expect(() => parseStackSettings(raw)).toThrow(SettingsError);
    expect(() => parseStackSettings(raw)).toThrow(message);
  });

  it("never echoes credentials found in a refused address", () => {
    const raw = { ...exampleSettings, repoUrl: "https://deploy:ghp_Secret123@github.com/org/crm.git" };
    expect(() => parseStackSettings(raw)).toThrow('Invalid setting "repoUrl" (got "https://***@github.com/org/crm.git")');
    expect(() => parseStackSettings(raw)).not.toThrow(/ghp_Secret123/);
  });

  it("names the setting and what is expected when a value has the wrong type or is missing", () => {
    expect(() => parseStackSettings({ ...exampleSettings, stackName: 5 }))
      .toThrow('Invalid setting "stackName" (got 5): expected a stack name of 1 to 64 letters, digits or -, starting with a letter.');
    expect(() => parseStackSettings({ ...exampleSettings, swapFile: ["/swapfile"] }))
      .toThrow(/^Invalid setting "swapFile" \(got \["\/swapfile"\]\): expected an absolute path/);
    const { gitEmail: _omitted, ...withoutEmail } = exampleSettings;
    expect(() => parseStackSettings(withoutEmail))
      .toThrow('Invalid setting "gitEmail": expected an e-mail address such as deploy@example.com (the setting is required).');
  });

  it("reports a misspelt key rather than the required setting it leaves out", () => {
    const { databaseName, ...rest } = exampleSettings;
    expect(() => parseStackSettings({ ...rest, databseName: databaseName }))
      .toThrow(/^Invalid setting "databseName": expected one of the known settings \(.*databaseName/);
  });

  it("accepts \"$schema\" (for editors) and leaves it out of the settings", () => {
    expect(exampleSettings.$schema).toBe("./stack-settings.schema.json");
    const settings = parseStackSettings(exampleSettings);
    expect(Object.keys(settings).sort()).toEqual(["backend", "instanceName", "provisioning", "region", "stackName"]);
    expect(settings.provisioning).not.toHaveProperty("$schema");
    expect(() => parseStackSettings({ ...exampleSettings, $schema: 1 })).toThrow(/Invalid setting "\$schema" \(got 1\): expected a string/);
  });

  it("refuses unknown keys (typos) and files that are not a JSON object", () => {
    expect(() => parseStackSettings({ ...exampleSettings, databseName: "crm" }))
      .toThrow(/Invalid setting "databseName": expected one of the known settings/);
    expect(() => parseStackSettings(["CrmHostStack"])).toThrow(/expected a JSON object/);
    const { repoUrl: _omitted, ...withoutRepo } = exampleSettings;
    expect(() => parseStackSettings(withoutRepo)).toThrow(/Invalid setting "repoUrl"/);
  });
});
