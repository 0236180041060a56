import { TerraformOutput, Testing } from "cdktf";
import { CrmHostStack } from "../../main";
import { loadEnvironments } from "../../settings/environments";
import { join } from "path";
import {
  ProvisioningUserData,
  USER_DATA_LIMIT_BYTES,
  escapeTemplateSyntax,
  terraformTemplate,
} from "../../constructs/provisioning-user-data";
import { renderProvisioningScript } from "../../userdata";
import { exampleStackSettings, synthesize } from "../support/synth";

const settings = exampleStackSettings().provisioning;
const expressions = {
  dbRootPasswordBase64: "${base64encode(var.db_root_password)}",
  appDbPasswordBase64: "${base64encode(var.app_db_password)}",
  sourceHostTokenBase64: "${base64encode(var.source_host_token)}",
};

/** Undoes Terraform's template escapes, as Terraform does when it evaluates a literal. */
function unescape(template: string): string {
  return template.replace(/\$\$\{/g, "${").replace(/%%\{/g, "%{");
}

describe("escapeTemplateSyntax", () => {
  it("doubles the introducer of every ${ and %{ and touches nothing else", () => {
    expect(escapeTemplateSyntax('echo "${HOME}" %{if} $$ 100% {x} $(date)')).toBe(
      'echo "$${HOME}" %%{if} $$ 100% {x} $(date)',
    );
  });
});

describe("terraformTemplate", () => {
  it("is the rendered script, escaped, with each secret expression where the script takes that secret", () => {
    const template = terraformTemplate(settings, expressions);
    const markers = { dbRootPasswordBase64: "QUFB", appDbPasswordBase64: "QkJC", sourceHostTokenBase64: "Q0ND" };
    const withMarkers = Object.entries(expressions).reduce(
      (text, [key, expression]) => text.split(expression).join(markers[key as keyof typeof markers]),
      template,
    );
    expect(unescape(withMarkers)).toBe(renderProvisioningScript(settings, markers));
    for (const expression of Object.values(expressions)) expect(template.split(expression)).toHaveLength(2);
  });

  it("escapes template syntax that comes from the settings, so Terraform reads it as text", () => {
    const odd = { ...settings, gitUser: "Dev ${USER} %{if}" };
    const template = terraformTemplate(odd, expressions);
    expect(template).toContain("Dev $${USER} %%{if}");
    expect(template).not.toMatch(/(?<![$])\$\{USER\}/);
  });
});

describe("ProvisioningUserData", () => {
  it("keeps the script in a local and hands the instance its gzip, in base64", () => {
    let userData: ProvisioningUserData | undefined;
    const { json } = synthesize((scope) => {
      userData = new ProvisioningUserData(scope, "user_data", { settings, secrets: expressions });
    });
    const [[name, value]] = Object.entries(json.locals ?? {});
    expect(value).toBe(terraformTemplate(settings, expressions));
    expect(userData!.script).toMatch(/TfToken/);
    expect(
      synthesize((scope) => {
        const made = new ProvisioningUserData(scope, "user_data", { settings, secrets: expressions });
        new TerraformOutput(scope, "b64", { value: made.base64 });
      }).json.output?.b64.value,
    ).toBe(`\${base64gzip(local.${name})}`);
  });

  it("puts the data volume's id expression into the script once, where the script takes it", () => {
    const volumeId = "${aws_ebs_volume.data.id}";
    const { json } = synthesize(
      (scope) =>
        new ProvisioningUserData(scope, "user_data", { settings, secrets: expressions, dataVolumeId: volumeId }),
    );
    const [script] = Object.values(json.locals ?? {}) as string[];
    expect(script.split(volumeId)).toHaveLength(2);
    expect(script).toContain(`\nreadonly DATA_VOLUME_ID='${volumeId}'\n`);
    expect(terraformTemplate(settings, expressions)).toContain("\nreadonly DATA_VOLUME_ID=''\n");
  });

  it("names the hosts' log group in the script, as given (a name, not an expression); none ships no logs", () => {
    const { json } = synthesize(
      (scope) =>
        new ProvisioningUserData(scope, "user_data", {
          settings,
          secrets: expressions,
          logGroupName: "/crm/CrmHostStack/crm-host",
        }),
    );
    const [script] = Object.values(json.locals ?? {}) as string[];
    expect(script).toContain("\nreadonly LOG_GROUP='/crm/CrmHostStack/crm-host' ");
    expect(terraformTemplate(settings, expressions)).toContain("\nreadonly LOG_GROUP='' ");
  });

  it("refuses, at synthesis, a script that secrets of the longest accepted size would push over EC2's 16 KiB gzip-compressed", () => {
    expect(() =>
      synthesize((scope) => new ProvisioningUserData(scope, "user_data", { settings, secrets: expressions })),
    ).not.toThrow();
    expect(() =>
      synthesize(
        (scope) =>
          new ProvisioningUserData(scope, "user_data", {
            settings,
            secrets: expressions,
            maxSecretLength: 2000,
          }),
      ),
    ).toThrow(/The compressed provisioning script can reach \d+ bytes, over EC2's user-data limit of 16384/);
    // Compressed, the script stays under the limit even with the longest secrets (the bound is
    // conservative: 25% on the compressed script, secrets counted incompressible), with and
    // without the data volume's id.
    let userData: ProvisioningUserData | undefined;
    synthesize((scope) => {
      userData = new ProvisioningUserData(scope, "user_data", { settings, secrets: expressions });
    });
    expect(userData!.maxCompressedBytes).toBeLessThanOrEqual(USER_DATA_LIMIT_BYTES);
    synthesize((scope) => {
      userData = new ProvisioningUserData(scope, "user_data", {
        settings,
        secrets: expressions,
        dataVolumeId: "${aws_ebs_volume.data.id}",
      });
    });
    expect(userData!.maxCompressedBytes).toBeLessThanOrEqual(USER_DATA_LIMIT_BYTES);
  });
});

describe("terraformTemplate of the scale-out topology", () => {
  const scaleOutSettings = exampleStackSettings({ topology: "scale-out", secrets: "parameter-store" }).provisioning;
  const names = {
    region: "us-east-1",
    appDbPassword: "/S/crm/app-db-password",
    sourceHostToken: "/S/crm/source-host-token",
  };
  const values = {
    databaseHost: "${aws_db_instance.crm_database.address}",
    databasePort: "3306",
    loadBalancerName: "${aws_lb.crm_load_balancer.dns_name}",
    releaseRef: "${var.release_ref}",
  };

  it("puts each expression where the header takes it (the load balancer's name in both URIs), and the port as it is", () => {
    const template = terraformTemplate(scaleOutSettings, names, { scaleOut: values });
    expect(template).toContain("readonly DB_HOST='${aws_db_instance.crm_database.address}' DB_PORT='3306'");
    expect(template).not.toContain("master_user_secret");
    expect(template.split("${var.release_ref}")).toHaveLength(2);
    expect(template).toContain(
      "readonly FRONTEND_URI='http://${aws_lb.crm_load_balancer.dns_name}' BACKEND_URI='http://${aws_lb.crm_load_balancer.dns_name}:3000'",
    );
    expect(template).not.toContain("placeholder");
  });

  it("leaves the load balancer's name out when a domain names the site", () => {
    const withDomain = exampleStackSettings({
      topology: "scale-out",
      secrets: "parameter-store",
      domain: { hostedZone: "example.com", name: "crm.example.com" },
    });
    const template = terraformTemplate(withDomain.provisioning, names, { scaleOut: values });
    expect(template).not.toContain("aws_lb.crm_load_balancer");
    expect(template).toContain("readonly FRONTEND_URI='https://crm.example.com'");
  });

  it("refuses a port given as an expression (a digit placeholder could be found in a setting)", () => {
    expect(() =>
      terraformTemplate(scaleOutSettings, names, {
        scaleOut: { ...values, databasePort: "${aws_db_instance.crm_database.port}" },
      }),
    ).toThrow("The database's port must be a number, not the expression ${aws_db_instance.crm_database.port}");
  });

  it("takes a ref by the one ref rule (settings/git-ref.ts) when the release is given as it is, and refuses another", () => {
    expect(
      terraformTemplate(scaleOutSettings, names, { scaleOut: { ...values, releaseRef: "release/2026.11" } }),
    ).toContain("RELEASE_REF='release/2026.11'");
    expect(() => terraformTemplate(scaleOutSettings, names, { scaleOut: { ...values, releaseRef: "v1..2" } })).toThrow(
      "The scale-out topology's releaseRef must match empty or a branch, tag or commit of 1 to 200 letters",
    );
  });
});

describe("the user data of every example stack, as the stack's own check counts it", () => {
  // EC2 takes 16 KiB of user data; the ceiling keeps room for what comes next (the figures' history: CHANGELOG.md).
  const CEILING = 10_240;
  test("is at most the ceiling for settings/example.json and examples/*.json (figures printed)", () => {
    const files = ["settings/example.json", "examples/dev.json", "examples/prod.json", "examples/scale-out.json"];
    const figures = files.flatMap((file) =>
      loadEnvironments([join(__dirname, "../..", file)]).map((settings) => {
        const stack = new CrmHostStack(Testing.app(), settings);
        const [userData] = stack.node
          .findAll()
          .filter((c): c is ProvisioningUserData => c instanceof ProvisioningUserData);
        return { file, stack: settings.stackName, bytes: userData.checkedBytes };
      }),
    );
    console.log(figures.map(({ file, stack, bytes }) => `${file} (${stack}): ${bytes} bytes`).join("\n"));
    expect(figures).toHaveLength(4);
    for (const figure of figures) expect(figure.bytes).toBeLessThanOrEqual(CEILING);
  });
});
