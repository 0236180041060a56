export * from "./constants";
export * from "./script";
export * from "./unit";
export * from "./ops";
export * from "./telemetry";
export * from "./ops-tool";
