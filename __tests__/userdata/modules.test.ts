/**
 * How the shell files of userdata/ compose: none defines a function that another file (or itself)
 * defines, and the one way they differ by topology or by secrets mode is `variant AXIS NAME`, whose
 * definitions NAME_<value> exist for every value of AXIS.
 */
import { spawnSync } from "child_process";
import { readdirSync, readFileSync } from "fs";
import { join } from "path";
import { APP_DB_GRANTS, renderProvisioningScript, ScaleOutValues } from "../../userdata";
import {
  ProvisioningSettings,
  SECRET_SOURCES,
  SecretParameterNames,
  TOPOLOGIES,
} from "../../settings/provisioning-settings";
import {
  haveTool,
  PARAMETER_NAMES,
  PARAMETER_STORE_SETTINGS,
  PRODUCTION_SETTINGS,
  SECRETS,
  shellFunction,
} from "./fixtures";
import { withModules } from "../support/harness/module-parameters";

const DIR = join(__dirname, "../../userdata");
const FILES = readdirSync(DIR)
  .filter((name) => name.endsWith(".sh"))
  .sort();
const text = (name: string) => readFileSync(join(DIR, name), "utf8");

/** The functions a file defines, at any depth (`name() {` or `function name`), as bash reads a definition's start. */
function definedFunctions(code: string): string[] {
  return [...code.matchAll(/^\s*(?:function\s+([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*)\s*\(\)\s*\{)/gm)].map(
    (m) => m[1] ?? m[2],
  );
}

/** The axes of `variant` and the values the header gives each (provision.sh: variant; userdata/script.ts). */
const AXES: Record<string, string[]> = {
  TOPOLOGY: TOPOLOGIES.map((value) => value.replace("-", "_")),
  SECRETS: SECRET_SOURCES.map((value) => value.replace("-", "_")),
};

const SCALE_OUT_SETTINGS: ProvisioningSettings = { ...PARAMETER_STORE_SETTINGS, topology: "scale-out" };
const SCALE_OUT_NAMES: SecretParameterNames = {
  region: PARAMETER_NAMES.region,
  appDbPassword: PARAMETER_NAMES.appDbPassword,
  sourceHostToken: PARAMETER_NAMES.sourceHostToken,
};
const SCALE_OUT_VALUES: ScaleOutValues = {
  databaseHost: "crm.abc.us-east-1.rds.amazonaws.com",
  databasePort: "3306",
  loadBalancerName: "crm-1.us-east-1.elb.amazonaws.com",
  releaseRef: "v1",
};
/** The user data of each topology and secrets mode. */
const SCRIPTS: Record<string, string> = {
  "single-host, user-data": renderProvisioningScript(PRODUCTION_SETTINGS, SECRETS),
  "single-host, parameter-store": renderProvisioningScript(PARAMETER_STORE_SETTINGS, PARAMETER_NAMES),
  "scale-out, parameter-store": renderProvisioningScript(SCALE_OUT_SETTINGS, SCALE_OUT_NAMES, "", "", SCALE_OUT_VALUES),
};

describe("the shell files of userdata/", () => {
  test("define no function twice, in one file or across files", () => {
    const where = new Map<string, string[]>();
    for (const file of FILES)
      for (const name of definedFunctions(text(file))) where.set(name, [...(where.get(name) ?? []), file]);
    const twice = [...where]
      .filter(([, files]) => files.length > 1)
      .map(([name, files]) => `${name}: ${files.join(", ")}`);
    expect(twice).toEqual([]);
    // The finder finds what bash defines: a file of definitions only (all but provision.sh and the runs: first-boot.sh,
    // ops-install.sh), sourced, defines those.
    for (const file of FILES.filter((name) => !["provision.sh", "first-boot.sh", "ops-install.sh"].includes(name))) {
      const declared = spawnSync(
        "bash",
        ["-c", `source ${JSON.stringify(join(DIR, file))}\ndeclare -F | cut -d' ' -f3`],
        { encoding: "utf8" },
      );
      expect(declared.stdout.trim().split("\n").sort()).toEqual(definedFunctions(text(file)).sort());
    }
  });

  test("choose between definitions only through variant: every variant call finds a definition for each value of its axis", () => {
    const defined = new Set(FILES.flatMap((file) => definedFunctions(text(file))));
    const calls = FILES.flatMap((file) =>
      [...text(file).matchAll(/\bvariant ([A-Z_]+) ([a-z_0-9]+)/g)].map((m) => ({ axis: m[1], name: m[2] })),
    );
    expect(calls.length).toBeGreaterThan(0);
    const missing = calls
      .flatMap(({ axis, name }) => (AXES[axis] ?? ["<no such axis>"]).map((value) => `${name}_${value}`))
      .filter((name) => !defined.has(name));
    expect(missing).toEqual([]);
    // None of the other ways: a definition made only where none is, or a call made only where one is.
    for (const file of FILES) expect(`${file}: ${text(file)}`).not.toMatch(/declare -F|type -t|command -v [a-z_]+ >/);
  });

  test("the header sets each axis to one of its values, and the app user's grants by topology", () => {
    for (const [name, script] of Object.entries(SCRIPTS)) {
      const [topology, secrets] = name.split(", ").map((value) => value.replace("-", "_"));
      expect(script).toContain(`\nreadonly TOPOLOGY=${topology} SECRETS=${secrets}\n`);
    }
    expect(SCRIPTS["single-host, user-data"]).toContain(
      `APP_DB_USER_HOST='localhost' APP_DB_GRANTS='${APP_DB_GRANTS["single-host"]}'\n`,
    );
    expect(SCRIPTS["scale-out, parameter-store"]).toContain(
      `APP_DB_USER_HOST='%' APP_DB_GRANTS='${APP_DB_GRANTS["scale-out"]}'\n`,
    );
  });

  test("load_secrets reads the root password's parameter on the single host only (a scale-out host has no database administrator)", () => {
    const read = (script: string) =>
      spawnSync(
        "bash",
        [
          "-c",
          [
            script.slice(0, script.indexOf("\nset -Eeuo pipefail\n")),
            "read_parameters() { printf '%s\\n' \"$@\"; }",
            shellFunction(script, "load_secrets_parameter_store"),
            "load_secrets_parameter_store",
          ].join("\n"),
        ],
        { encoding: "utf8" },
      ).stdout;
    expect(read(SCRIPTS["single-host, parameter-store"])).toBe(
      [
        "DB_ROOT_PASSWORD",
        PARAMETER_NAMES.dbRootPassword,
        "database root password",
        "APP_DB_PASSWORD",
        PARAMETER_NAMES.appDbPassword,
        "application database password",
        "SOURCE_HOST_TOKEN",
        PARAMETER_NAMES.sourceHostToken,
        "source host token",
        "",
      ].join("\n"),
    );
    expect(read(SCRIPTS["scale-out, parameter-store"])).toBe(
      [
        "APP_DB_PASSWORD",
        PARAMETER_NAMES.appDbPassword,
        "application database password",
        "SOURCE_HOST_TOKEN",
        PARAMETER_NAMES.sourceHostToken,
        "source host token",
        "",
      ].join("\n"),
    );
  });

  const shellcheck = haveTool("shellcheck") ? test : test.skip;
  shellcheck(
    "each topology's and secrets mode's user data passes shellcheck (https.test.ts checks the domain's)",
    () => {
      for (const [name, script] of Object.entries(SCRIPTS)) {
        const result = spawnSync("shellcheck", ["-s", "bash", "-"], { input: withModules(script), encoding: "utf8" });
        expect(`${name}: ${result.stdout}${result.stderr}`).toBe(`${name}: `);
      }
    },
  );
});
