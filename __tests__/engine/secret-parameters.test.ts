/**
 * The parameter-store mode's plan-time check, planned by a real engine: the stack's own construct, with
 * the account id and the ARNs the tagging API lists given as variables instead of read by the AWS provider.
 */
import { TerraformVariable } from "cdktf";
import { parameterArn, SecretParameters, secretParameterNames } from "../../constructs/secret-parameters";
import { synthesize } from "../support/synth";
import { describeWithEngine, EngineWorkspace, flatten } from "../support/terraform-engine";

const STACK = "CrmHost-prod";
const REGION = "eu-west-1";
const ACCOUNT = "123456789012";
const NAMES = secretParameterNames(STACK);
const arn = (name: string, account = ACCOUNT, region = REGION) => parameterArn(region, account, name);

describeWithEngine(
  "parameter-store mode: the check that the secrets' parameters exist, planned by a real engine",
  (engine) => {
    let workspace: EngineWorkspace;

    beforeAll(async () => {
      const { json } = synthesize((scope) => {
        const accountId = new TerraformVariable(scope, "account_id", { type: "string" });
        const listed = new TerraformVariable(scope, "listed_arns", { type: "list(string)" });
        new SecretParameters(scope, "secret_parameters", {
          stackName: STACK,
          region: REGION,
          accountId: accountId.stringValue,
          listedArns: listed.listValue,
        });
      });
      workspace = new EngineWorkspace(engine, json);
      await workspace.init();
    }, 60_000);
    afterAll(() => workspace?.remove());

    const plan = (listed: string[]) => workspace.plan({ account_id: ACCOUNT, listed_arns: listed });

    it("plans when the tagging API lists all three", async () => {
      const result = await plan(
        [NAMES.sourceHostToken, NAMES.dbRootPassword, NAMES.appDbPassword].map((name) => arn(name)),
      );
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(result.stdout).toMatch(/Plan: 1 to add, 0 to change, 0 to destroy/);
    }, 60_000);

    it.each([
      ["one is missing", [NAMES.dbRootPassword, NAMES.sourceHostToken].map((name) => arn(name)), [NAMES.appDbPassword]],
      ["none exists", [], [NAMES.appDbPassword, NAMES.dbRootPassword, NAMES.sourceHostToken]],
      [
        "they are another account's or region's",
        [
          arn(NAMES.dbRootPassword, "210987654321"),
          arn(NAMES.appDbPassword, ACCOUNT, "us-east-1"),
          arn(NAMES.sourceHostToken),
        ],
        [NAMES.appDbPassword, NAMES.dbRootPassword],
      ],
      [
        "another stack's have the same leaf names",
        Object.values(secretParameterNames("CrmHost-dev")).map((name) => arn(name)),
        [NAMES.appDbPassword, NAMES.dbRootPassword, NAMES.sourceHostToken],
      ],
    ])(
      "fails the plan naming exactly the missing ones when %s",
      async (_case, listed, missing) => {
        const result = await plan(listed);
        expect(result.code).not.toBe(0);
        const message = flatten(result.stderr);
        expect(message).toContain("Resource precondition failed");
        expect(message).toContain(
          `Parameter Store (${REGION}) has no ${missing.join(", ")}: put the secrets with "npm run secrets -- ${STACK} set"`,
        );
        for (const name of Object.values(NAMES).filter((name) => !missing.includes(name)))
          expect(message).not.toContain(name);
      },
      60_000,
    );
  },
);
