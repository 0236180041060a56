import { IamInstanceProfile } from "@cdktf/provider-aws/lib/iam-instance-profile";
import { InstanceRole } from "../../constructs/instance-role";
import { only, synthesize } from "../support/synth";

describe("InstanceRole", () => {
  const { text, json } = synthesize(
    (scope) => new InstanceRole(scope, "identity", { nameTag: "CrmHostStack/CrmServer" }),
  );
  const role = only(json.resource, "aws_iam_role");

  it("lets only the EC2 service assume the role, with policy language 2012-10-17", () => {
    expect(JSON.parse(role.assume_role_policy)).toEqual({
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Action: "sts:AssumeRole", Principal: { Service: "ec2.amazonaws.com" } }],
    });
  });

  it("tags the role Name = <stack_name>/<instance_name> and attaches no permission policies", () => {
    expect(role.tags).toEqual({ Name: "CrmHostStack/CrmServer" });
    expect(role.managed_policy_arns).toBeUndefined();
    expect(role.inline_policy).toBeUndefined();
    for (const type of ["aws_iam_role_policy", "aws_iam_role_policy_attachment", "aws_iam_policy"]) {
      expect(json.resource?.[type]).toBeUndefined();
    }
  });

  it("puts the role into an instance profile", () => {
    const roleName = Object.keys(json.resource!.aws_iam_role)[0];
    expect(text).toHaveResourceWithProperties(IamInstanceProfile, { role: `\${aws_iam_role.${roleName}.name}` });
  });
});
