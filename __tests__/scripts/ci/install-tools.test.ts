/**
 * scripts/ci/install-tools.sh's Terraform CLI configuration (terraform.tfrc): hashicorp/aws from the
 * first provider mirror that holds it, the registry for everything else or without a mirror; and
 * env.sh exports it. The engine is the pinned one already on the machine (linked, nothing built).
 */
import { execFile } from "child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { describeWithEngine, EngineWorkspace } from "../../support/terraform-engine";

const ROOT = resolve(__dirname, "../../..");

function bash(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(
      "bash",
      args,
      { cwd: ROOT, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    ),
  );
}

describeWithEngine("npm run tools: the project's Terraform CLI configuration", (engine) => {
  const dir = mkdtempSync(join(tmpdir(), "crm-tfrc-"));
  const mirror = join(dir, "mirror");
  const platform = `${process.platform}_${process.arch === "x64" ? "amd64" : process.arch}`;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const install = (tools: string, mirrors: string) =>
    bash(["scripts/ci/install-tools.sh", "terraform"], {
      CRM_TOOLS_DIR: tools,
      CRM_PROVIDER_MIRRORS: mirrors,
      CRM_TERRAFORM_SYSTEM_BINARY: realpathSync(engine),
      CRM_SKIP_APT: "1",
    });

  it("names the first mirror that holds hashicorp/aws, and Terraform installs the provider from it alone", async () => {
    // A provider in the unpacked layout; init only links it, so any file stands for the binary.
    const version = join(mirror, "registry.terraform.io/hashicorp/aws/9.9.9", platform);
    mkdirSync(version, { recursive: true });
    writeFileSync(join(version, "terraform-provider-aws_v9.9.9_x5"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    const tools = join(dir, "with-mirror");
    const result = await install(tools, `${join(dir, "nothing-here")}:${mirror}`);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/tfrc +- +written .* hashicorp\/aws 9\.9\.9 from /);
    const config = readFileSync(join(tools, "terraform.tfrc"), "utf8");
    expect(config).toContain(
      `filesystem_mirror {\n    path    = "${mirror}"\n    include = ["registry.terraform.io/hashicorp/aws"]\n  }`,
    );
    expect(config).toContain('direct {\n    exclude = ["registry.terraform.io/hashicorp/aws"]\n  }');

    const workspace = new EngineWorkspace(engine, {
      terraform: { required_providers: { aws: { source: "hashicorp/aws", version: "9.9.9" } } },
    });
    try {
      const init = await workspace.run(["init", "-input=false", "-no-color"], {
        TF_CLI_CONFIG_FILE: join(tools, "terraform.tfrc"),
      });
      expect({ code: init.code, stderr: init.stderr }).toEqual({ code: 0, stderr: "" });
      expect(init.stdout).toContain("Installing hashicorp/aws v9.9.9");
      const sourced = await bash(["-c", 'source scripts/ci/env.sh && printf %s "$TF_CLI_CONFIG_FILE"'], {
        CRM_TOOLS_DIR: tools,
      });
      expect(sourced.stdout).toBe(join(tools, "terraform.tfrc"));
    } finally {
      workspace.remove();
    }
  }, 120_000);

  it("names the registry when no mirror holds the provider, as on a user's machine; env.sh exports nothing without the file", async () => {
    const tools = join(dir, "without-mirror");
    const result = await install(tools, join(dir, "nothing-here"));
    expect(result.code).toBe(0);
    expect(readFileSync(join(tools, "terraform.tfrc"), "utf8")).toMatch(
      /provider_installation \{\n {2}direct \{\}\n\}\n$/,
    );
    const sourced = await bash(["-c", 'source scripts/ci/env.sh && printf %s "${TF_CLI_CONFIG_FILE-unset}"'], {
      CRM_TOOLS_DIR: join(dir, "never-installed"),
    });
    expect(sourced.stdout).toBe("unset");
  }, 120_000);
});
