import { TerraformOutput } from "cdktf";
import { shortHash } from "../../constructs/aws-names";
import { DATABASE_ENGINE_VERSION, databaseIdentifier, ManagedDatabase } from "../../constructs/managed-database";
import { only, synthesize } from "../support/synth";

describe("ManagedDatabase", () => {
  const { json } = synthesize((scope) => {
    const db = new ManagedDatabase(scope, "database", {
      identifier: "crmhost-scale-crm",
      subnetIds: ["subnet-a", "subnet-b"],
      securityGroupIds: ["sg-db"],
      instanceClass: "db.t4g.micro",
      allocatedStorageGib: 20,
      maxAllocatedStorageGib: 100,
      multiAz: false,
      backupRetentionDays: 7,
      deletionProtection: true,
      nameTag: "S/W/database",
    });
    new TerraformOutput(scope, "host", { value: db.address });
    new TerraformOutput(scope, "port", { value: db.port });
    new TerraformOutput(scope, "secret", { value: db.masterSecretArn });
  });
  const instance = only(json.resource, "aws_db_instance");

  it("runs RDS for MariaDB at a pinned major version whose minor versions RDS applies, never a major upgrade", () => {
    expect(instance).toMatchObject({
      identifier: "crmhost-scale-crm",
      engine: "mariadb",
      engine_version: DATABASE_ENGINE_VERSION,
      auto_minor_version_upgrade: true,
      allow_major_version_upgrade: false,
      instance_class: "db.t4g.micro",
      port: 3306,
    });
    expect(DATABASE_ENGINE_VERSION).toMatch(/^10\.11$/);
  });

  it("is never public, in a DB subnet group of the given subnets, behind the given security groups", () => {
    expect(instance.publicly_accessible).toBe(false);
    expect(json.resource?.aws_db_subnet_group).toEqual({
      crm_database: {
        name_prefix: "crmhost-scale-crm-",
        description: "Subnets of the database crmhost-scale-crm",
        subnet_ids: ["subnet-a", "subnet-b"],
        tags: { Name: "S/W/database" },
      },
    });
    expect(instance).toMatchObject({
      db_subnet_group_name: "${aws_db_subnet_group.crm_database.name}",
      vpc_security_group_ids: ["sg-db"],
    });
  });

  it("has RDS make and keep the master password in Secrets Manager: no password passes through Terraform", () => {
    expect(instance).toMatchObject({ username: "admin", manage_master_user_password: true });
    expect(instance).not.toHaveProperty("password");
    expect(json.output?.secret.value).toBe("${aws_db_instance.crm_database.master_user_secret[0].secret_arn}");
    expect([json.output?.host.value, json.output?.port.value]).toEqual([
      "${aws_db_instance.crm_database.address}",
      "3306",
    ]);
  });

  it("keeps the data: encrypted gp3 storage that grows, backups with point-in-time restore, deletion protection and a final snapshot", () => {
    expect(instance).toMatchObject({
      storage_type: "gp3",
      allocated_storage: 20,
      max_allocated_storage: 100,
      storage_encrypted: true,
      backup_retention_period: 7,
      backup_window: "03:00-04:00",
      maintenance_window: "sun:04:30-sun:05:30",
      delete_automated_backups: false,
      copy_tags_to_snapshot: true,
      deletion_protection: true,
      skip_final_snapshot: false,
      final_snapshot_identifier: "${aws_db_subnet_group.crm_database.name}-final",
      multi_az: false,
      enabled_cloudwatch_logs_exports: ["error", "slowquery"],
      tags: { Name: "S/W/database" },
    });
  });

  it.each([
    ["CrmHost-scale", "crmhost-scale-crm"],
    ["9_Lives__Stack", "lives-stack-crm"],
    // Cut to fit: the start and a hash of the whole name (constructs/aws-names.ts).
    ["A".repeat(80), `${"a".repeat(50)}-${shortHash("A".repeat(80))}-crm`],
  ])("makes an RDS identifier of the stack name %s: %s", (stack, identifier) => {
    expect(databaseIdentifier(stack)).toBe(identifier);
    expect(identifier).toMatch(/^[a-z](?!.*--)[a-z0-9-]{0,62}$/);
  });

  it("names the final snapshot after the subnet group's generated name, one per deployment: a second destroy does not collide", () => {
    expect(json.resource?.aws_db_subnet_group?.crm_database).toMatchObject({ name_prefix: "crmhost-scale-crm-" });
  });

  it("writes the slow-query log it exports: its own parameter group turns slow_query_log on, to a file", () => {
    expect(json.resource?.aws_db_parameter_group?.crm_database).toEqual({
      name_prefix: "crmhost-scale-crm-",
      family: "mariadb10.11",
      description: "Parameters of the database crmhost-scale-crm",
      parameter: [
        { name: "slow_query_log", value: "1" },
        { name: "log_output", value: "FILE" },
      ],
      tags: { Name: "S/W/database" },
      lifecycle: { create_before_destroy: true },
    });
    expect(instance.parameter_group_name).toBe("${aws_db_parameter_group.crm_database.name}");
  });
});
