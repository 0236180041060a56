/**
 * What the hosts publish to CloudWatch and where they write their logs: one place that the stack's
 * alarms and least-privilege policy (constructs/host-health-alarms.ts, constructs/host-telemetry-policy.ts)
 * and the host side that publishes (userdata/) both read, so that the names cannot drift apart.
 * Settings sit at the bottom of the imports: both sides may import this file.
 */

/** The custom metric namespace; the hosts' role may put metrics in this namespace only. */
export const HOST_METRIC_NAMESPACE = "CRM/Host";

/** Dimension names of the host metrics. */
export const HOST_METRIC_DIMENSIONS = {
  /** The EC2 instance id (`i-…`), on every host metric. */
  instance: "InstanceId",
  /** Which volume a disk metric measures: one of {@link HOST_VOLUMES}. */
  volume: "Volume",
} as const;

/** The `Volume` dimension's values: the root file system (/) and the data volume's mount. */
export const HOST_VOLUMES = { root: "root", data: "data" } as const;

/**
 * The metrics, each published every minute:
 * - `AppHealthy`: 1 when the app answers its health check over HTTP with a status below 500 (the ops command's check,
 *   and the load balancer's 200-499), else 0 (dimension InstanceId);
 * - `DiskUsedPercent`: percent of the file system's blocks in use (dimensions InstanceId and Volume);
 * - `MemoryUsedPercent`: percent of memory in use, MemAvailable counted as free (dimension InstanceId).
 */
export const HOST_METRICS = {
  appHealthy: "AppHealthy",
  diskUsedPercent: "DiskUsedPercent",
  memoryUsedPercent: "MemoryUsedPercent",
} as const;

/** Seconds between two publications of each host metric (the alarms' period). */
export const HOST_METRIC_PERIOD_SECONDS = 60;

/** The CloudWatch Logs log group of a stack's hosts: one stream per instance and log. */
export function hostLogGroupName(stackName: string, instanceName: string): string {
  return `/crm/${stackName}/${instanceName}`;
}
