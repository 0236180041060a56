import { MAX_HOSTS, SCALE_OUT_DEFAULTS, ScaleOutVariables } from "../../constructs/scale-out-variables";
import { synthesize } from "../support/synth";

describe("ScaleOutVariables", () => {
  const variables = synthesize((scope) => new ScaleOutVariables(scope, "scale_out")).json.variable ?? {};

  it("declares the topology's variables under their own names, subnet_ids required, every other with a default", () => {
    expect(Object.keys(variables).sort()).toEqual([
      "database_allocated_storage_gib",
      "database_backup_retention_days",
      "database_deletion_protection",
      "database_instance_class",
      "database_max_allocated_storage_gib",
      "database_multi_az",
      "host_instance_type",
      "hosts_desired_capacity",
      "hosts_max_size",
      "hosts_min_size",
      "instance_refresh_max_healthy_percentage",
      "release_ref",
      "subnet_ids",
    ]);
    expect(variables.subnet_ids).toMatchObject({ type: "list(string)", nullable: false });
    expect(variables.subnet_ids.default).toBeUndefined();
    for (const [name, variable] of Object.entries(variables)) {
      expect(variable.description).toEqual(expect.any(String));
      if (name !== "subnet_ids") expect(variable.default).toBeDefined();
    }
  });

  it("defaults to two t3.micro hosts (room for four), a refresh that keeps them all serving, and a small protected database", () => {
    const defaults = Object.fromEntries(Object.entries(variables).map(([name, variable]) => [name, variable.default]));
    expect(defaults).toMatchObject({
      hosts_min_size: SCALE_OUT_DEFAULTS.hostsMinSize,
      hosts_max_size: 4,
      hosts_desired_capacity: 2,
      host_instance_type: "t3.micro",
      instance_refresh_max_healthy_percentage: 200,
      release_ref: "",
      database_instance_class: "db.t4g.micro",
      database_allocated_storage_gib: 20,
      database_max_allocated_storage_gib: 100,
      database_multi_az: false,
      database_backup_retention_days: 7,
      database_deletion_protection: true,
    });
    expect(variables.database_multi_az.type).toBe("bool");
  });

  it("validates every value with messages naming the variable, the sizes against each other (the engine test plans them)", () => {
    for (const [name, variable] of Object.entries(variables)) {
      if (variable.type === "bool") continue;
      expect(variable.validation?.length).toBeGreaterThan(0);
      for (const rule of variable.validation ?? [])
        expect(rule.error_message).toMatch(new RegExp(`^Invalid value for variable "${name}": expected `));
    }
    expect(variables.hosts_max_size.validation?.[0].condition).toContain(`<= ${MAX_HOSTS}`);
    expect(variables.hosts_desired_capacity.validation?.[1].condition).toBe(
      "${var.hosts_desired_capacity >= var.hosts_min_size && var.hosts_desired_capacity < var.hosts_max_size}",
    );
  });

  it("takes other defaults", () => {
    const other =
      synthesize(
        (scope) =>
          new ScaleOutVariables(scope, "scale_out", {
            defaults: { hostsMinSize: 3, databaseInstanceClass: "db.m7g.large" },
          }),
      ).json.variable ?? {};
    expect([other.hosts_min_size.default, other.database_instance_class.default, other.hosts_max_size.default]).toEqual(
      [3, "db.m7g.large", 4],
    );
  });
});
