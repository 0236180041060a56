import { Testing } from "cdktf";
import { CrmHostStack } from "../main";
import { loadStackSettings, DEFAULT_SETTINGS_FILE } from "../settings/stack-settings";
import { architectureDiagram } from "./docs/diagram";
const stack = new CrmHostStack(Testing.app(), loadStackSettings(DEFAULT_SETTINGS_FILE));
console.log(architectureDiagram(JSON.parse(Testing.synth(stack))));
