export * from "./constants";
export * from "./settings";
export * from "./script";
export * from "./unit";
export * from "./grammars";
export * from "./ops";
