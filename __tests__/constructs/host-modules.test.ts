import { HostModules, moduleParameterPath, STANDARD_PARAMETER_LIMIT } from "../../constructs/host-modules";
import { hostModules } from "../../userdata";
import { synthesize } from "../support/synth";
import { PARAMETER_STORE_SETTINGS, PRODUCTION_SETTINGS } from "../userdata/fixtures";

describe("HostModules", () => {
  const { json } = synthesize(
    (scope) =>
      new HostModules(scope, "modules", {
        settings: PRODUCTION_SETTINGS,
        path: "/CrmHostStack/crm/modules",
        roleName: "${aws_iam_role.r.name}",
      }),
  );
  const parameters = () => json.resource!.aws_ssm_parameter as Record<string, Record<string, string>>;

  it("puts each module of the first boot in a Standard String parameter of its own, at a readable address, its value the module's", () => {
    const modules = hostModules(PRODUCTION_SETTINGS);
    expect(Object.keys(parameters()).sort()).toEqual([
      "crm_host_modules_local_database",
      "crm_host_modules_ops",
      "crm_host_modules_telemetry",
    ]);
    for (const module of modules) {
      expect(parameters()[`crm_host_modules_${module.module.replace("-", "_")}`]).toEqual({
        name: `/CrmHostStack/crm/modules/${module.module}`,
        type: "String",
        tier: "Standard",
        value: module.value,
        description: `userdata/${module.module}.sh of the first boot, gzip in base64 (sha256 ${module.sha256.slice(0, 12)})`,
      });
    }
  });

  it("lets the role read exactly those parameters, and nothing else", () => {
    expect(json.data!.aws_iam_policy_document.crm_host_modules.statement).toEqual([
      {
        sid: "ReadTheModules",
        effect: "Allow",
        actions: ["ssm:GetParameters"],
        resources: ["ops", "telemetry", "local_database"].map(
          (module) => `\${aws_ssm_parameter.crm_host_modules_${module}.arn}`,
        ),
      },
    ]);
    expect(json.resource!.aws_iam_role_policy).toEqual({
      crm_host_modules: {
        name: "read-crm-host-modules",
        role: "${aws_iam_role.r.name}",
        policy: "${data.aws_iam_policy_document.crm_host_modules.json}",
      },
    });
  });

  it("makes no policy without a role, and gives the instances the parameters and the policy to depend on", () => {
    const bare = synthesize((scope) => {
      const modules = new HostModules(scope, "modules", { settings: PARAMETER_STORE_SETTINGS, path: "/p/modules" });
      expect(modules.dependables).toHaveLength(4);
    }).json;
    expect(bare.resource!.aws_iam_role_policy).toBeUndefined();
    expect(Object.keys(bare.resource!.aws_ssm_parameter)).toContain("crm_host_modules_parameter_store");
    synthesize((scope) =>
      expect(
        new HostModules(scope, "modules", { settings: PRODUCTION_SETTINGS, path: "/p", roleName: "r" }).dependables,
      ).toHaveLength(4),
    );
  });

  it("names a stack's modules beside its secrets, within Parameter Store's name rule", () => {
    expect(moduleParameterPath("CrmHost-prod")).toBe("/CrmHost-prod/crm/modules");
    expect(() => moduleParameterPath("a b")).toThrow(/stackName/);
  });

  it("keeps every module of every kind of host within a Standard parameter", () => {
    for (const topology of ["single-host", "scale-out"] as const) {
      for (const secrets of ["user-data", "parameter-store"] as const) {
        for (const module of hostModules({
          ...PRODUCTION_SETTINGS,
          topology,
          secrets,
          domain: { hostedZone: "example.com", name: "a.example.com", acmeDirectory: "https://a/d" },
        })) {
          expect(module.value.length).toBeLessThanOrEqual(STANDARD_PARAMETER_LIMIT);
        }
      }
    }
  });
});
