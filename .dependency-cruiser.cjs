// The project's import rules (docs/testing.md, "Layout"), checked by dependency-cruiser in
// __tests__/imports.test.ts and by `npm run lint:imports`. settings/ sits at the bottom and imports
// nothing of ours; userdata/ renders from validated settings and imports only settings/; constructs/
// build on both; topologies/ wire constructs; main.ts and scripts/ sit on top. No cycle anywhere.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle: split the shared part out into the lower layer.",
      from: {},
      to: { circular: true },
    },
    {
      name: "settings-at-the-bottom",
      severity: "error",
      comment: "settings/ (the types and validation of what a user writes) imports nothing of ours outside settings/.",
      from: { path: "^settings/" },
      to: { path: "^(userdata|constructs|topologies|scripts|__tests__)/|^main\\.ts$" },
    },
    {
      name: "userdata-renders-from-settings",
      severity: "error",
      comment: "userdata/ renders host files from validated settings: it imports only settings/ and itself.",
      from: { path: "^userdata/" },
      to: { path: "^(constructs|topologies|scripts|__tests__)/|^main\\.ts$" },
    },
    {
      name: "constructs-below-topologies",
      severity: "error",
      comment:
        "constructs/ are parts the topologies wire: they import settings/, userdata/ and each other, never a topology or main.ts.",
      from: { path: "^constructs/" },
      to: { path: "^(topologies|scripts|__tests__)/|^main\\.ts$" },
    },
    {
      name: "topologies-below-main",
      severity: "error",
      comment: "topologies/ are loaded by main.ts, never the other way round.",
      from: { path: "^topologies/" },
      to: { path: "^(scripts|__tests__)/|^main\\.ts$" },
    },
    {
      name: "no-tests-in-code",
      severity: "error",
      comment: "Code that ships imports no test module.",
      from: { pathNot: "^__tests__/" },
      to: { path: "^__tests__/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|cdktf\\.out|\\.gen)/" },
    // Type-only imports count: a cycle of types is still a cycle for the reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
