import { DbInstance } from "@cdktf/provider-aws/lib/db-instance";
import { awsName, AWS_NAME_RULES, shortHash } from "./aws-names";
import { DbParameterGroup } from "@cdktf/provider-aws/lib/db-parameter-group";
import { DbSubnetGroup } from "@cdktf/provider-aws/lib/db-subnet-group";
import { IResolvable } from "cdktf";
import { Construct } from "constructs";
import { DATABASE_MASTER_USER } from "../settings/provisioning-settings";
import { nameElements } from "./addresses";

/**
 * RDS for MariaDB's engine version: the major version only, so that RDS applies its minor versions in the
 * maintenance window (auto_minor_version_upgrade) without a diff in the plan. 10.11, an LTS release (RDS
 * supports it to 2028), is the nearest to the single host's MariaDB 10.5 of Amazon Linux 2023: its dump
 * imports as it is (docs/scale-out.md).
 */
export const DATABASE_ENGINE_VERSION = "10.11";
/** MariaDB's port. */
export const DATABASE_PORT = 3306;
/** When RDS takes the daily backup and applies maintenance (UTC): the backup as the single host's snapshots, at 03:00. */
export const DATABASE_BACKUP_WINDOW = "03:00-04:00";
export const DATABASE_MAINTENANCE_WINDOW = "sun:04:30-sun:05:30";
/** The logs RDS exports to CloudWatch Logs: MariaDB's error log, and its slow query log (written because of DATABASE_PARAMETERS). */
export const DATABASE_LOG_EXPORTS = ["error", "slowquery"];
/**
 * The parameters that differ from RDS's default group: the slow-query log exported above stays empty
 * unless the server writes it (slow_query_log, off by default) to a file (log_output: RDS exports only
 * FILE logs to CloudWatch Logs). Both are dynamic: they apply without a reboot.
 */
export const DATABASE_PARAMETERS: Record<string, string> = { slow_query_log: "1", log_output: "FILE" };

/**
 * An RDS identifier from a stack name: lower case, letters, digits and single hyphens, starting with a letter,
 * at most 63 characters; a name cut to fit ends in a hash of the whole stack name (two stacks that differ only
 * past the cut get identifiers, and final snapshots, of their own).
 */
export function databaseIdentifier(stackName: string): string {
  const base = stackName
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .replace(/-+/g, "-")
    .replace(/^[^a-z]+/, "")
    .replace(/-+$/, "");
  const max = AWS_NAME_RULES.rdsIdentifier.max - "-crm".length;
  const cut = base.length <= max ? base : `${base.slice(0, max - 9).replace(/-+$/, "")}-${shortHash(stackName)}`;
  return awsName("rdsIdentifier", `${cut}-crm`, "stackName");
}

/** Props of {@link ManagedDatabase}. */
export interface ManagedDatabaseProps {
  /**
   * The instance's identifier (databaseIdentifier); its final snapshot is `<subnet group name>-final`, the
   * subnet group's generated name being `<identifier>-<creation time>`: one name per deployment, so a
   * second destroy (after a new apply) does not collide with the first one's snapshot.
   */
  readonly identifier: string;
  /** Subnets of the DB subnet group: two or more zones. */
  readonly subnetIds: string[];
  /** Security groups of the instance (the database tier's). */
  readonly securityGroupIds: string[];
  /** Instance class, such as db.t4g.micro (a string or an expression). */
  readonly instanceClass: string;
  /** Storage in GiB, and the most storage autoscaling may grow it to (0: off). */
  readonly allocatedStorageGib: number;
  readonly maxAllocatedStorageGib: number;
  /** A standby in another zone. */
  readonly multiAz: boolean | IResolvable;
  /** Days of automated backups (point-in-time restore within them): 1 to 35. */
  readonly backupRetentionDays: number;
  /** Whether RDS refuses to delete the instance. */
  readonly deletionProtection: boolean | IResolvable;
  /** Value of the Name tag. */
  readonly nameTag: string;
  /**
   * The master user's name: its password RDS makes, keeps in Secrets Manager and rotates (manage_master_user_password).
   * @default DATABASE_MASTER_USER ("admin")
   */
  readonly masterUsername?: string;
  /**
   * KMS key of the master user's secret.
   * @default - Secrets Manager's AWS managed key, aws/secretsmanager
   */
  readonly masterSecretKmsKeyId?: string;
  /**
   * The engine version.
   * @default DATABASE_ENGINE_VERSION ("10.11")
   */
  readonly engineVersion?: string;
  /**
   * Terraform name of the subnet group and the instance (`aws_db_subnet_group.<name>`, `aws_db_instance.<name>`).
   * @default "crm_database"
   */
  readonly name?: string;
}

/**
 * The scale-out topology's database: Amazon RDS for MariaDB in a DB subnet group on the stack's subnets,
 * never publicly accessible, storage encrypted (gp3, autoscaling up to a bound), the master password made
 * and kept by RDS in Secrets Manager, automated backups with point-in-time restore, minor versions applied
 * by RDS, Multi-AZ on request, deletion protection and a final snapshot, tags copied to snapshots; its
 * error and slow-query logs exported to CloudWatch Logs. Inputs and defaults modelled on
 * terraform-aws-modules/rds (manage_master_user_password, storage_encrypted, skip_final_snapshot false,
 * auto_minor_version_upgrade, max_allocated_storage, backup_retention_period, multi_az,
 * deletion_protection, copy_tags_to_snapshot), with deletion protection on by default.
 */
export class ManagedDatabase extends Construct {
  public readonly subnetGroup: DbSubnetGroup;
  /** `aws_db_parameter_group.<name>`: DATABASE_PARAMETERS, so that the exported slow-query log has entries. */
  public readonly parameterGroup: DbParameterGroup;
  public readonly instance: DbInstance;

  constructor(scope: Construct, id: string, props: ManagedDatabaseProps) {
    super(scope, id);
    const name = props.name ?? "crm_database";
    this.subnetGroup = new DbSubnetGroup(this, "subnet_group", {
      namePrefix: awsName("dbSubnetGroupNamePrefix", `${props.identifier}-`, "stackName"),
      description: `Subnets of the database ${props.identifier}`,
      subnetIds: props.subnetIds,
      tags: { Name: props.nameTag },
    });
    nameElements(name, this.subnetGroup);
    const engineVersion = props.engineVersion ?? DATABASE_ENGINE_VERSION;
    this.parameterGroup = new DbParameterGroup(this, "parameter_group", {
      namePrefix: awsName("dbParameterGroupNamePrefix", `${props.identifier}-`, "stackName"),
      family: `mariadb${engineVersion.split(".").slice(0, 2).join(".")}`,
      description: `Parameters of the database ${props.identifier}`,
      parameter: Object.entries(DATABASE_PARAMETERS).map(([parameterName, value]) => ({ name: parameterName, value })),
      tags: { Name: props.nameTag },
      // A new family (a major version) makes a new group, which the instance moves to before the old one goes.
      lifecycle: { createBeforeDestroy: true },
    });
    nameElements(name, this.parameterGroup);
    this.instance = new DbInstance(this, "instance", {
      identifier: props.identifier,
      engine: "mariadb",
      engineVersion,
      autoMinorVersionUpgrade: true,
      allowMajorVersionUpgrade: false,
      instanceClass: props.instanceClass,
      storageType: "gp3",
      allocatedStorage: props.allocatedStorageGib,
      maxAllocatedStorage: props.maxAllocatedStorageGib,
      storageEncrypted: true,
      username: props.masterUsername ?? DATABASE_MASTER_USER,
      manageMasterUserPassword: true,
      masterUserSecretKmsKeyId: props.masterSecretKmsKeyId,
      port: DATABASE_PORT,
      dbSubnetGroupName: this.subnetGroup.name,
      vpcSecurityGroupIds: props.securityGroupIds,
      publiclyAccessible: false,
      multiAz: props.multiAz,
      backupRetentionPeriod: props.backupRetentionDays,
      backupWindow: DATABASE_BACKUP_WINDOW,
      maintenanceWindow: DATABASE_MAINTENANCE_WINDOW,
      deleteAutomatedBackups: false,
      copyTagsToSnapshot: true,
      deletionProtection: props.deletionProtection,
      skipFinalSnapshot: false,
      finalSnapshotIdentifier: `${this.subnetGroup.name}-final`,
      parameterGroupName: this.parameterGroup.name,
      enabledCloudwatchLogsExports: DATABASE_LOG_EXPORTS,
      tags: { Name: props.nameTag },
    });
    nameElements(name, this.instance);
  }

  /** The endpoint's host name, for the hosts' DB_HOST. */
  public get address(): string {
    return this.instance.address;
  }

  /** The port the database listens on (DATABASE_PORT, as the instance sets it), for the hosts' DB_PORT. */
  public get port(): string {
    return String(DATABASE_PORT);
  }

  /** The ARN of the secret in which RDS keeps the master user's name and password (the operator's: `ops db-setup`). */
  public get masterSecretArn(): string {
    return this.instance.masterUserSecret.get(0).secretArn;
  }
}
