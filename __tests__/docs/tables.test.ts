import { TerraformOutput, TerraformVariable } from "cdktf";
import { z } from "zod";
import {
  hostPathsTable,
  outputsTable,
  pathSettingsTable,
  plain,
  settingsTable,
  variablesTable,
} from "../../scripts/docs/tables";
import { matching } from "../../settings/rules";
import { backendSettingsSchema } from "../../settings/backend-settings";
import { domainSettingsSchema } from "../../settings/domain-settings";
import { CADDY_SHA512 } from "../../settings/domain-settings";
import { stackSettingsSchema } from "../../settings/stack-settings";
import { PlanCheck } from "../../constructs/plan-check";
import { synthesize } from "../support/synth";

describe("README tables", () => {
  const { json } = synthesize((scope) => {
    new TerraformVariable(scope, "zone", {
      type: "string",
      description: "Availability zone, e.g. us-east-1a.",
      validation: [
        {
          condition: "${length(var.zone) > 0}",
          errorMessage: 'Invalid value for variable "zone": expected an availability zone name.',
        },
      ],
    });
    new TerraformVariable(scope, "token", {
      type: "string",
      sensitive: true,
      description: "A <secret> token | with a pipe.",
    });
    new TerraformVariable(scope, "cidrs", {
      type: "list(string)",
      default: ["0.0.0.0/0"],
      description: "Who may connect.",
    });
    new TerraformVariable(scope, "empty", { type: "string", default: "", description: "Empty by default." });
    new PlanCheck(scope, "checks", {
      preconditions: [
        {
          condition: "${length(var.token) > 0}",
          errorMessage: 'Invalid value for variable "token": expected a non-empty token.',
        },
      ],
    });
    new TerraformOutput(scope, "address", { value: "${var.zone}", description: "Where it runs." });
    new TerraformOutput(scope, "secret", { value: "${var.token}", sensitive: true });
  });

  it("lists every variable with description, type, default, sensitivity and the rules the plan enforces", () => {
    expect(variablesTable(json).split("\n")).toEqual([
      "| variable | description | type | default | sensitive | rule (checked at plan) |",
      "| --- | --- | --- | --- | --- | --- |",
      '| `cidrs` | Who may connect. | `list(string)` | `["0.0.0.0/0"]` | no |  |',
      '| `empty` | Empty by default. | `string` | `""` | no |  |',
      "| `token` | A &lt;secret&gt; token \\| with a pipe. | `string` | required | yes | a non-empty token |",
      "| `zone` | Availability zone, e.g. us-east-1a. | `string` | required | no | an availability zone name |",
    ]);
  });

  it("lists every output with description and sensitivity", () => {
    expect(outputsTable(json).split("\n").slice(2)).toEqual([
      "| `address` | Where it runs. | no |",
      "| `secret` |  | yes |",
    ]);
  });

  it("lists every setting of the schema with its description, default and rule", () => {
    const rows = settingsTable(stackSettingsSchema).split("\n");
    // One row per key, and one per key of the nested backend and domain objects.
    expect(rows).toHaveLength(
      2 +
        Object.keys(stackSettingsSchema.shape).length +
        Object.keys(backendSettingsSchema.shape).length +
        Object.keys(domainSettingsSchema.shape).length,
    );
    expect(rows).toContain(
      "| `caddySha512` | SHA-512 of that tarball, checked before anything of it runs (default: the pinned release's). | " +
        `\`${CADDY_SHA512}\` | 128 lower-case hexadecimal digits (a SHA-512) |`,
    );
    expect(rows).toContain(
      '| `backend.type` | `local`: a state file on the machine that runs Terraform (one person trying the stack); `s3`: an S3 bucket, encrypted, with S3-native locking (teams and CI). | `local` | "local" or "s3" |',
    );
    expect(rows).toContain(
      "| `loginHome` | Home directory of the login user. As in the original stack: `/home/ec2-user`. | `/home/ec2-user` | an absolute path of at most 200 characters such as /home/ec2-user/app (letters, digits, / . \\_ - only; no .. or //) |",
    );
    expect(rows).toContain(
      "| `gitUser` | `<git_user>`: global git user.name of the login user, as git writes it into commits. | required | 1 to 100 printable characters that git keeps as written in a commit's author: no &lt; or &gt;, and not starting or ending with a space or one of . , : ; \" ' \\ |",
    );
    // Domain rules (refinements) are stated in the rule column too.
    expect(rows.find((row) => row.startsWith("| `databaseName` |"))).toContain(
      "not one of MariaDB's own schemas (mysql, information\\_schema",
    );
    expect(rows.find((row) => row.startsWith("| `appName` |"))).toContain(
      "no nftables keyword (such as ip, tcp, counter, log, meta, redirect)",
    );
  });

  it("lists where each path setting may be on the instance, and the host's own paths they stay clear of", () => {
    expect(pathSettingsTable().split("\n")).toContain(
      "| `logFile` | the provisioning log | inside `/var/log` | where the system keeps logs |",
    );
    expect(pathSettingsTable().split("\n")).toContain(
      "| `appDir` | the checkout of the app | inside `/home` | inside loginHome; it lies in the login user's home |",
    );
    const host = hostPathsTable().split("\n");
    expect(host).toContain("| `/etc` | the system's configuration | be it, hold it or lie inside it |");
    expect(host).toContain("| `/var/lib` | a directory of the system | be it or hold it |");
    expect(host).toContain(
      "| `<loginHome>/.ssh` | the login user's SSH keys: authorized\\_keys | be it, hold it or lie inside it |",
    );
  });

  it("lists nested settings with dotted keys, and states the rule of a setting without a phrase from its schema", () => {
    const schema = z.strictObject({
      backend: z
        .strictObject({
          kind: z.enum(["local", "s3"]).default("local").meta({ description: "Where the state is kept." }),
          bucket: matching("S3 bucket.", /^[a-z0-9.-]{3,63}$/, "an S3 bucket name").optional(),
          retries: z.number().int().min(0).max(10).optional(),
        })
        .optional()
        .meta({ description: "Terraform state." }),
    });
    expect(settingsTable(schema).split("\n").slice(2)).toEqual([
      "| `backend` | Terraform state. | optional | an object of the settings below |",
      "| `backend.kind` | Where the state is kept. | `local` | one of `local`, `s3` |",
      "| `backend.bucket` | S3 bucket. | optional | an S3 bucket name |",
      "| `backend.retries` |  | optional | integer from 0 to 10 |",
    ]);
  });

  it("keeps plain text plain in Markdown, code spans untouched", () => {
    expect(plain("a_b *c* <d> [e] `<f_g>`")).toBe("a\\_b \\*c\\* &lt;d&gt; \\[e\\] `<f_g>`");
  });
});
