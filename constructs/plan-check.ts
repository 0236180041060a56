import { Precondition, TerraformResource } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";

/** Props of {@link PlanCheck}. */
export interface PlanCheckProps {
  /** Conditions that must hold for `terraform plan` to succeed; each failure prints only its message. */
  readonly preconditions: Precondition[];
  /**
   * Value kept in the resource's `input` (and state), e.g. a marker that tells checks apart.
   * @default - none
   */
  readonly input?: Record<string, unknown>;
  /**
   * Terraform name of the resource: its address is `terraform_data.<name>`.
   * @default - the construct's id
   */
  readonly name?: string;
}

/**
 * A built-in `terraform_data` resource (Terraform >= 1.4, no provider needed) that carries
 * preconditions, so a plan fails before anything reaches AWS when one is false.
 *
 * cdktf's own `DataResource` binding is not used: it runs `terraform version` while synthesizing
 * (a version validation), which fails synthesis on a machine without Terraform and costs a
 * process start per resource.
 */
export class PlanCheck extends Construct {
  public readonly resource: TerraformResource;

  constructor(scope: Construct, id: string, props: PlanCheckProps) {
    super(scope, id);
    this.resource = new TerraformDataResource(this, "check", props);
    nameElements(props.name ?? id, this.resource);
  }

  /** Adds a condition the plan must meet, for a rule known only once a later construct exists. */
  public addPrecondition(precondition: Precondition): void {
    const lifecycle = this.resource.lifecycle ?? {};
    this.resource.lifecycle = { ...lifecycle, precondition: [...(lifecycle.precondition ?? []), precondition] };
  }
}

class TerraformDataResource extends TerraformResource {
  constructor(
    scope: Construct,
    id: string,
    private readonly props: PlanCheckProps,
  ) {
    super(scope, id, { terraformResourceType: "terraform_data", lifecycle: { precondition: props.preconditions } });
  }

  protected synthesizeAttributes(): { [name: string]: unknown } {
    return this.props.input ? { input: this.props.input } : {};
  }
}
