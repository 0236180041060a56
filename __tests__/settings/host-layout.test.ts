/**
 * Paths clear of the system and of each other, and identities that keep the lock-down meaningful:
 * through the stack's settings (parseStackSettings), every class of collision is refused in one line
 * that names both paths and why; the edges that are fine are accepted.
 */
import { SettingsError } from "../../settings/errors";
import exampleSettings from "../../settings/example.json";
import { parseStackSettings } from "../../settings/stack-settings";
import {
  HOST_PATHS,
  isInside,
  LOGIN_HOME_PATHS,
  METADATA_ENDPOINTS,
  PATH_SETTINGS,
  relation,
  SYSTEM_ACCOUNTS,
  usesIpv6Metadata,
} from "../../settings/host-layout";

function refusal(changes: Record<string, unknown>): string {
  try {
    parseStackSettings({ ...exampleSettings, ...changes });
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${JSON.stringify(changes)}`);
}

describe("paths and their relations", () => {
  test("a path is, lies inside or holds another, segment by segment", () => {
    expect(relation("/var/lib/mysql", "/var/lib/mysql")).toBe("is");
    expect(relation("/var/lib/mysql/x", "/var/lib/mysql")).toBe("lies inside");
    expect(relation("/var/lib", "/var/lib/mysql")).toBe("holds");
    expect(relation("/var/lib/mysql2", "/var/lib/mysql")).toBeUndefined();
    expect(isInside("/swapfile", "/")).toBe(true);
    expect(isInside("/", "/")).toBe(false);
  });

  test("every path setting of the settings has its role, and the tables hold absolute, distinct paths", () => {
    expect(Object.keys(PATH_SETTINGS).sort()).toEqual([
      "appDir",
      "dataMount",
      "logFile",
      "loginHome",
      "scriptDirectory",
      "swapFile",
    ]);
    const paths = HOST_PATHS.map((host) => host.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const path of paths) expect(path).toMatch(/^\/([^/]+(\/[^/]+)*)?$/);
    expect(LOGIN_HOME_PATHS.map((entry) => entry.name)).toEqual(
      expect.arrayContaining([".ssh", ".nvm", ".bashrc", ".gitconfig"]),
    );
  });
});

describe("paths clear of the system and of each other (stack settings)", () => {
  it.each([
    // The system's own trees.
    [
      "swapFile",
      "/etc/swap",
      "the swap file, apart from the system's own paths: it lies inside /etc (the system's configuration)",
    ],
    ["swapFile", "/boot/swap", "it lies inside /boot (the kernels and the boot loader)"],
    ["swapFile", "/proc/swap", "it lies inside /proc (a file system of the kernel)"],
    ["swapFile", "/usr/swap", "it lies inside /usr (the system's programs and libraries)"],
    ["swapFile", "/usr", "it holds scriptDirectory /usr/local/sbin (the directory of root's helper script)"],
    ["swapFile", "/tmp/swap", "it lies inside /tmp (a memory file system, emptied at every boot)"],
    ["swapFile", "/root/swap", "it lies inside /root (root's home)"],
    ["swapFile", "/home/other/swap", "it lies inside /home (the users' homes)"],
    [
      "dataMount",
      "/srv",
      "the data volume's mount point, apart from the system's own paths: it is /srv (a directory of the system)",
    ],
    ["dataMount", "/media", "it is /media (a directory of the system)"],
    ["dataMount", "/opt", "it is /opt (a directory of the system)"],
    // /var/lib of other services, and their logs.
    ["dataMount", "/var/lib/cloud", "it is /var/lib/cloud (the state of another service)"],
    ["dataMount", "/var/lib/amazon/ssm", "it lies inside /var/lib/amazon (the state of another service)"],
    ["dataMount", "/var/lib/rpm", "it is /var/lib/rpm (the state of another service)"],
    [
      "logFile",
      "/var/log/cloud-init-output.log",
      "it is /var/log/cloud-init-output.log (a log of the system or of another service)",
    ],
    ["logFile", "/var/log/journal/crm.log", "it lies inside /var/log/journal"],
    ["logFile", "/var/log/wtmp", "it is /var/log/wtmp"],
    // Files other services load: only the log's own place, /var/log, is allowed.
    ["logFile", "/etc/profile.d/crm.sh", "the provisioning log, a path inside /var/log (where the system keeps logs)"],
    ["logFile", "/etc/sysconfig/nftables.conf", "the provisioning log, a path inside /var/log"],
    ["swapFile", "/etc/fstab", "it lies inside /etc (the system's configuration)"],
    // The login user's home and its tool directories.
    ["dataMount", "/home/ec2-user", "it is also loginHome /home/ec2-user (the login user's home)"],
    ["dataMount", "/home/ec2-user/.ssh", "it lies inside loginHome /home/ec2-user (the login user's home)"],
    [
      "appDir",
      "/home/ec2-user/.ssh",
      "the checkout of the app, apart from the login user's own files: it is /home/ec2-user/.ssh (the login user's SSH keys: authorized_keys)",
    ],
    [
      "appDir",
      "/home/ec2-user/.nvm/versions/app",
      "it lies inside /home/ec2-user/.nvm (nvm and Node.js, installed by step 12)",
    ],
    ["appDir", "/home/ec2-user/.bashrc", "it is /home/ec2-user/.bashrc (a start file of the login shell)"],
    ["appDir", "/home/ec2-user/.config", "it is /home/ec2-user/.config"],
    ["scriptDirectory", "/home/ec2-user/bin", "it lies inside loginHome /home/ec2-user (the login user's home)"],
    [
      "scriptDirectory",
      "/usr/sbin",
      "the directory of root's helper script, a path inside /usr/local or /opt (root's own trees, which the login user cannot write)",
    ],
    // The host's own files (HOST_FILES), which lie in the system's trees.
    ["dataMount", "/var/lib/mysql", "it is /var/lib/mysql (the state of another service)"],
    ["dataMount", "/dev/crm", "it lies inside /dev (a file system of the kernel)"],
    ["dataMount", "/var/lib", "it is /var/lib (a directory of the system)"],
    // Each other.
    [
      "swapFile",
      "/var/lib/crm-data/swap",
      "the swap file, apart from the other path settings: it lies inside dataMount /var/lib/crm-data (the data volume's mount point)",
    ],
  ])("refuses %s = %j, naming both paths and why", (setting, value, words) => {
    const message = refusal({ [setting]: value });
    expect(message).toMatch(new RegExp(`^Invalid setting "${setting}" \\(got ".*"\\): expected `));
    expect(message).toContain(words);
    expect(message.split("\n")).toHaveLength(1);
  });

  it("names a default that collides with a given value, with its value", () => {
    expect(refusal({ dataMount: "/var/log/crm-provisioning.log" })).toBe(
      'Invalid setting "dataMount" (got "/var/log/crm-provisioning.log"): ' +
        "expected the data volume's mount point, apart from the other path settings: it is also logFile /var/log/crm-provisioning.log " +
        "(the provisioning log).",
    );
  });

  it.each([
    [{ swapFile: "/var/swapfile" }],
    [{ swapFile: "/swap/file" }],
    [{ dataMount: "/data" }],
    [{ dataMount: "/srv/crm-data" }],
    [{ dataMount: "/mnt/crm" }],
    [{ logFile: "/var/log/crm/provision.log" }],
    [{ scriptDirectory: "/opt/crm/bin" }],
    [{ appDir: "/home/ec2-user/apps/crm" }],
    [{ appDir: "/home/ec2-user/.app" }],
    [{ loginUser: "deploy", loginHome: "/home/deploy", appDir: "/home/deploy/crm" }],
  ])("accepts %j", (changes) => {
    expect(() => parseStackSettings({ ...exampleSettings, ...changes })).not.toThrow();
  });
});

describe("identities that keep the lock-down meaningful", () => {
  it.each([
    "root",
    "bin",
    "daemon",
    "nobody",
    "sshd",
    "mysql",
    "ec2-instance-connect",
    "chrony",
    "systemd-network",
    "systemd-anything",
  ])("refuses the login user %j: root or a system account", (loginUser) => {
    expect(refusal({ loginUser })).toMatch(
      new RegExp(
        `^Invalid setting "loginUser" \\(got "${loginUser}"\\): expected the image's login user \\(such as ec2-user\\), not root nor a system account`,
      ),
    );
  });

  it.each([
    "http://instance-data",
    "http://metadata.google.internal",
    "http://169.254.169.253",
    "http://169.254.169.254:8080",
    "http://[fd00:ec2::253]",
    "http://127.0.0.1",
  ])("refuses the metadata endpoint %j: only the service's own address", (metadataEndpoint) => {
    expect(refusal({ metadataEndpoint })).toMatch(/^Invalid setting "metadataEndpoint" \(got ".*"\): expected /);
  });

  it("accepts the metadata service's IPv4 and IPv6 addresses, and tells the instance to enable the IPv6 one", () => {
    expect(METADATA_ENDPOINTS).toEqual(["http://169.254.169.254", "http://[fd00:ec2::254]"]);
    for (const metadataEndpoint of METADATA_ENDPOINTS) {
      expect(parseStackSettings({ ...exampleSettings, metadataEndpoint }).provisioning.metadataEndpoint).toBe(
        metadataEndpoint,
      );
    }
    expect(METADATA_ENDPOINTS.map(usesIpv6Metadata)).toEqual([false, true]);
    expect(SYSTEM_ACCOUNTS).not.toContain("ec2-user");
  });
});
