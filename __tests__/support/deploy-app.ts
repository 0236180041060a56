/**
 * The cdktf app of main.ts as `npm run deploy -- --app "node --import tsx __tests__/support/deploy-app.ts"`
 * runs it in __tests__/engine/real-provider.test.ts: main.ts's own synthesis of the stacks of $CRM_SETTINGS
 * (with the mirror's provider version by the users' own switch, CRM_AWS_PROVIDER_VERSION), then each
 * synthesized stack rewritten as that test's copies are (providerCopy: a local state file, moto's missing
 * APIs dropped), so that the user's command deploys against moto. Test-only: the state file comes from
 * CRM_TEST_STATE_FILE, which the test sets.
 */
import { App } from "cdktf";
import { readFileSync, writeFileSync } from "fs";
import { join } from "path";
import { synthesize } from "../../main";
import gaps from "../engine/moto-gaps.json";
import { droppedTypes, providerCopy } from "./real-provider";

const app = synthesize(new App());
for (const stack of Object.values(JSON.parse(readFileSync(join(app.outdir, "manifest.json"), "utf8")).stacks) as {
  synthesizedStackPath: string;
}[]) {
  const file = join(app.outdir, stack.synthesizedStackPath);
  const copy = providerCopy(
    JSON.parse(readFileSync(file, "utf8")),
    undefined,
    droppedTypes(gaps),
    process.env.CRM_TEST_STATE_FILE,
  );
  writeFileSync(file, JSON.stringify(copy, null, 2));
}
