import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { REF_EXPECTED, REF_FORBIDDEN, REF_SHAPE } from "../settings/git-ref";
import { INSTANCE_TYPE, INSTANCE_TYPE_EXPECTED, INSTANCE_TYPE_PATTERN } from "./constants";
import { conditionRule, matchesPattern, patternCondition, stackVariable, wholeNumberBetween } from "./variable-rules";

/** Subnet ids as EC2 writes them. */
const SUBNET_ID = "^subnet-([0-9a-f]{8}|[0-9a-f]{17})$";

/** The defaults ScaleOutVariables gives its variables. */
export interface ScaleOutDefaults {
  readonly hostsMinSize: number;
  readonly hostsMaxSize: number;
  readonly hostsDesiredCapacity: number;
  readonly refreshMaxHealthyPercentage: number;
  readonly databaseInstanceClass: string;
  readonly databaseAllocatedStorageGib: number;
  readonly databaseMaxAllocatedStorageGib: number;
  readonly databaseBackupRetentionDays: number;
}

/** Defaults of the variables: two hosts, room for four (a refresh replaces both at once), and RDS's smallest Graviton class (terraform-aws-modules/rds's examples' choice). */
export const SCALE_OUT_DEFAULTS: ScaleOutDefaults = {
  hostsMinSize: 2,
  hostsMaxSize: 4,
  hostsDesiredCapacity: 2,
  refreshMaxHealthyPercentage: 200,
  databaseInstanceClass: "db.t4g.micro",
  databaseAllocatedStorageGib: 20,
  databaseMaxAllocatedStorageGib: 100,
  databaseBackupRetentionDays: 7,
};

/** Most hosts the variables accept: far above this app's need, a guard against a typo (an extra 0). */
export const MAX_HOSTS = 50;

/** Props of {@link ScaleOutVariables}. */
export interface ScaleOutVariablesProps {
  /**
   * The variables' defaults.
   * @default SCALE_OUT_DEFAULTS
   */
  readonly defaults?: Partial<ScaleOutDefaults>;
}

/**
 * The per-account and per-deployment values of the scale-out topology (docs/scale-out.md) as Terraform
 * variables, each with validation blocks whose message names the variable and what is expected: where the
 * group goes (`subnet_ids`: two or more, zones checked at plan by SubnetZones), what it deploys
 * (`release_ref`), how many hosts of which type, how an instance refresh rolls them, and the database's
 * size, availability and protection. Names and defaults modelled on terraform-aws-modules/autoscaling
 * (min_size, max_size, desired_capacity, instance_refresh.preferences.max_healthy_percentage) and
 * terraform-aws-modules/rds (instance_class, allocated_storage, max_allocated_storage, multi_az,
 * backup_retention_period, deletion_protection), with the database's given a `database_` prefix.
 */
export class ScaleOutVariables extends Construct {
  /** `subnet_ids`: two or more subnets in different zones of one VPC, for the hosts, the load balancer and the database. */
  public readonly subnetIds: TerraformVariable;
  /** `release_ref`: the git ref every host deploys (empty: the default branch). */
  public readonly releaseRef: TerraformVariable;
  /** `host_instance_type`: the hosts' instance type. */
  public readonly hostInstanceType: TerraformVariable;
  /** `hosts_min_size`, `hosts_max_size`, `hosts_desired_capacity`: the group's size. */
  public readonly hostsMinSize: TerraformVariable;
  public readonly hostsMaxSize: TerraformVariable;
  public readonly hostsDesiredCapacity: TerraformVariable;
  /** `instance_refresh_max_healthy_percentage`: how many hosts an instance refresh runs at once, new and old (all old ones keep serving). */
  public readonly refreshMaxHealthyPercentage: TerraformVariable;
  /** `database_instance_class`, `database_allocated_storage_gib`, `database_max_allocated_storage_gib`: the database's size. */
  public readonly databaseInstanceClass: TerraformVariable;
  public readonly databaseAllocatedStorageGib: TerraformVariable;
  public readonly databaseMaxAllocatedStorageGib: TerraformVariable;
  /** `database_multi_az`: a standby in another zone. */
  public readonly databaseMultiAz: TerraformVariable;
  /** `database_backup_retention_days`: days of automated backups (point-in-time restore within them). */
  public readonly databaseBackupRetentionDays: TerraformVariable;
  /** `database_deletion_protection`: whether RDS refuses to delete the database. */
  public readonly databaseDeletionProtection: TerraformVariable;

  constructor(scope: Construct, id: string, props: ScaleOutVariablesProps = {}) {
    super(scope, id);
    const defaults = { ...SCALE_OUT_DEFAULTS, ...props.defaults };
    const number = (name: string, fallback: number, description: string) =>
      stackVariable(this, name, { type: "number", nullable: false, default: fallback, description });
    const flag = (name: string, fallback: boolean, description: string) =>
      stackVariable(this, name, { type: "bool", nullable: false, default: fallback, description });

    this.subnetIds = stackVariable(this, "subnet_ids", {
      type: "list(string)",
      nullable: false,
      description:
        'IDs of two or more public subnets of one VPC, each in another Availability Zone, e.g. ["subnet-0123456789abcdef0", ' +
        '"subnet-0fedcba9876543210"]: the load balancer, the hosts and the database\'s subnet group span them.',
    });
    this.subnetIds.addValidation(
      conditionRule(
        this.subnetIds,
        `length(var.subnet_ids) >= 2 && alltrue([for id in var.subnet_ids : ${patternCondition("id", SUBNET_ID)}])`,
        'two or more subnet ids, each "subnet-" followed by 8 or 17 lowercase hexadecimal digits, in different Availability Zones',
      ),
    );
    this.subnetIds.addValidation(
      conditionRule(
        this.subnetIds,
        "length(distinct(var.subnet_ids)) == length(var.subnet_ids)",
        "each subnet id once",
      ),
    );

    this.releaseRef = stackVariable(this, "release_ref", {
      type: "string",
      nullable: false,
      default: "",
      description:
        "The git ref (branch, tag or commit) every host clones and runs; empty: the repository's default branch as it is when " +
        "each host boots. Pin a tag or a commit: a change makes a new launch template version, which an instance refresh rolls out.",
    });
    this.releaseRef.addValidation(
      conditionRule(
        this.releaseRef,
        // The one ref rule (settings/git-ref.ts): a ref git refuses would kill every new host at step 8.
        `var.release_ref == "" || (${patternCondition("var.release_ref", REF_SHAPE)} && !${patternCondition("var.release_ref", REF_FORBIDDEN)})`,
        `empty, or ${REF_EXPECTED}`,
      ),
    );

    this.hostInstanceType = stackVariable(this, "host_instance_type", {
      type: "string",
      nullable: false,
      default: INSTANCE_TYPE,
      description:
        `The hosts' EC2 instance type (the original stack's ${INSTANCE_TYPE} by default); the plan checks ` +
        "that it runs the image's architecture.",
    });
    this.hostInstanceType.addValidation(
      matchesPattern(this.hostInstanceType, INSTANCE_TYPE_PATTERN, INSTANCE_TYPE_EXPECTED),
    );

    this.hostsMinSize = number(
      "hosts_min_size",
      defaults.hostsMinSize,
      "Fewest hosts the Auto Scaling group keeps running (two keep the app up while one zone fails).",
    );
    this.hostsMinSize.addValidation(wholeNumberBetween(this.hostsMinSize, 1, MAX_HOSTS, "hosts"));
    this.hostsMaxSize = number("hosts_max_size", defaults.hostsMaxSize, "Most hosts the Auto Scaling group may run.");
    this.hostsMaxSize.addValidation(wholeNumberBetween(this.hostsMaxSize, 1, MAX_HOSTS, "hosts"));
    this.hostsMaxSize.addValidation(
      conditionRule(this.hostsMaxSize, "var.hosts_max_size >= var.hosts_min_size", "at least hosts_min_size"),
    );
    this.hostsDesiredCapacity = number(
      "hosts_desired_capacity",
      defaults.hostsDesiredCapacity,
      "Hosts the Auto Scaling group runs now, from hosts_min_size to one below hosts_max_size (an instance refresh needs room for a new host).",
    );
    this.hostsDesiredCapacity.addValidation(wholeNumberBetween(this.hostsDesiredCapacity, 1, MAX_HOSTS, "hosts"));
    this.hostsDesiredCapacity.addValidation(
      conditionRule(
        this.hostsDesiredCapacity,
        // Below hosts_max_size: an instance refresh launches a new host before it stops an old one.
        "var.hosts_desired_capacity >= var.hosts_min_size && var.hosts_desired_capacity < var.hosts_max_size",
        "from hosts_min_size to one below hosts_max_size (an instance refresh launches a new host before it stops an old one)",
      ),
    );

    this.refreshMaxHealthyPercentage = number(
      "instance_refresh_max_healthy_percentage",
      defaults.refreshMaxHealthyPercentage,
      "Most hosts an instance refresh runs at once, in percent of hosts_desired_capacity: it launches new hosts up to this, and stops " +
        "old ones only once new ones are healthy, so all desired hosts keep serving. 200 replaces them all in one batch; lower it " +
        "when the account's vCPU quota or hosts_max_size has no room for twice the hosts (150 with two hosts: one at a time).",
    );
    this.refreshMaxHealthyPercentage.addValidation(
      wholeNumberBetween(this.refreshMaxHealthyPercentage, 100, 200, "percent"),
    );
    this.refreshMaxHealthyPercentage.addValidation(
      conditionRule(
        this.refreshMaxHealthyPercentage,
        // Hosts are whole: below this share, the refresh would have no room for one new host.
        "floor(var.hosts_desired_capacity * var.instance_refresh_max_healthy_percentage / 100) > var.hosts_desired_capacity",
        "room for one new host beside hosts_desired_capacity: at least 100 * (hosts_desired_capacity + 1) / hosts_desired_capacity",
      ),
    );

    this.databaseInstanceClass = stackVariable(this, "database_instance_class", {
      type: "string",
      nullable: false,
      default: defaults.databaseInstanceClass,
      description: "The RDS for MariaDB instance class.",
    });
    this.databaseInstanceClass.addValidation(
      matchesPattern(
        this.databaseInstanceClass,
        "^db[.][a-z0-9-]+[.][a-z0-9]+$",
        "an RDS instance class such as db.t4g.micro or db.m7g.large",
      ),
    );
    this.databaseAllocatedStorageGib = number(
      "database_allocated_storage_gib",
      defaults.databaseAllocatedStorageGib,
      "The database's gp3 storage, in GiB (RDS for MariaDB takes 20 at least).",
    );
    this.databaseAllocatedStorageGib.addValidation(
      wholeNumberBetween(this.databaseAllocatedStorageGib, 20, 65536, "GiB"),
    );
    this.databaseMaxAllocatedStorageGib = number(
      "database_max_allocated_storage_gib",
      defaults.databaseMaxAllocatedStorageGib,
      "Up to how many GiB RDS grows the storage by itself when it runs low (storage autoscaling); 0 turns that off.",
    );
    this.databaseMaxAllocatedStorageGib.addValidation(
      conditionRule(
        this.databaseMaxAllocatedStorageGib,
        "var.database_max_allocated_storage_gib == floor(var.database_max_allocated_storage_gib) && var.database_max_allocated_storage_gib <= 65536 && " +
          "(var.database_max_allocated_storage_gib == 0 || var.database_max_allocated_storage_gib >= ceil(var.database_allocated_storage_gib * 1.1))",
        "0, or a whole number of GiB up to 65536 and at least 10 percent above database_allocated_storage_gib (as RDS requires)",
      ),
    );
    this.databaseMultiAz = flag(
      "database_multi_az",
      false,
      "A standby of the database in another zone, which RDS fails over to (about twice the database's price).",
    );
    this.databaseBackupRetentionDays = number(
      "database_backup_retention_days",
      defaults.databaseBackupRetentionDays,
      "Days of automated backups RDS keeps; the database can be restored to any second within them (point-in-time restore).",
    );
    this.databaseBackupRetentionDays.addValidation(wholeNumberBetween(this.databaseBackupRetentionDays, 1, 35, "days"));
    this.databaseDeletionProtection = flag(
      "database_deletion_protection",
      true,
      "RDS refuses to delete the database while this is true: set it to false and apply before a destroy (docs/scale-out.md).",
    );
  }
}
