/**
 * The first boot's modules (userdata/script.ts, hostModules) as a stand-in host's Parameter Store holds them: what the
 * stacks put there (HostModules), for the modules a rendered script's header names by sha256.
 */
import { mkdirSync, writeFileSync } from "fs";
import { join } from "path";
import { HostModule, hostModules } from "../../../userdata/script";
import { ProvisioningSettings } from "../../../settings/provisioning-settings";

/** A module the header of a script names: its parameter's name and its sha256. */
export interface NamedModule {
  readonly name: string;
  readonly sha256: string;
}

/** The modules a rendered script's header names (MODULE_PATH, MODULES), or [] for a script without them (an installed command). */
export function modulesNamed(script: string): NamedModule[] {
  const path = /^readonly MODULE_PATH='([^']*)'/m.exec(script)?.[1];
  const list = /^readonly MODULES=\(([^)]*)\)$/m.exec(script)?.[1];
  if (path === undefined || list === undefined) return [];
  return [...list.matchAll(/'([a-z-]+):([0-9a-f]{64})'/g)].map(([, module, sha256]) => ({
    name: `${path}/${module}`,
    sha256,
  }));
}

/**
 * The module of each sha256 that a script may name: the modules depend only on the topology, the place of the secrets
 * and whether a domain is set (scriptModules and the variants of treeShake), so every script's are found.
 */
export function modulesBySha(): Map<string, HostModule> {
  if (BY_SHA.size > 0) return BY_SHA;
  for (const topology of ["single-host", "scale-out"] as const) {
    for (const secrets of ["user-data", "parameter-store"] as const) {
      for (const domain of [
        undefined,
        { hostedZone: "example.com", name: "crm.example.com", acmeDirectory: "https://acme.example.com/directory" },
      ]) {
        for (const module of hostModules({ topology, secrets, domain } as ProvisioningSettings))
          BY_SHA.set(module.sha256, module);
      }
    }
  }
  return BY_SHA;
}
const BY_SHA = new Map<string, HostModule>();

/** The module a script's header names, as a deploy put it in Parameter Store; one no settings make throws. */
export function namedModule({ name, sha256 }: NamedModule): HostModule {
  const module = modulesBySha().get(sha256);
  if (module === undefined) throw new Error(`no module of sha256 ${sha256} (${name})`);
  return module;
}

/**
 * A rendered script with its modules' functions where the host defines them, before provision.sh's (the first
 * function): the code the first boot runs once load_modules is done, whole, for shellcheck and for a test that reads a
 * module's function.
 */
export function withModules(script: string): string {
  const first = /^[A-Za-z_][A-Za-z0-9_]*\(\) \{/m.exec(script);
  if (first === null) throw new Error("the script defines no function");
  const code = modulesNamed(script)
    .map((named) => namedModule(named).code)
    .join("");
  return script.slice(0, first.index) + code + script.slice(first.index);
}

/** Keeps the modules a script's header names in `moduleDir` as a host whose first boot read them does (load_modules), by sha256. */
export function keepModules(script: string, moduleDir: string): void {
  mkdirSync(moduleDir, { recursive: true, mode: 0o700 });
  for (const named of modulesNamed(script))
    writeFileSync(join(moduleDir, `${named.sha256}.sh`), namedModule(named).code, { mode: 0o600 });
}
