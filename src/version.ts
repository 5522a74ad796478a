/** The product version (kept equal to package.json's by a test) and the protocol version. */
export const VERSION = "0.1.0";
/** Bumped when a released method's params or results change incompatibly. */
export const PROTOCOL_VERSION = "1.0";

/**
 * What `longrun --version` reports besides VERSION: the release target and the git commit the
 * executable was built from (scripts/compile.ts defines both at build time). From the sources,
 * the runtime's platform and "source".
 */
export function buildInfo(): { target: string; commit: string } {
  const target = process.env.LONGRUN_BUILD_TARGET;
  const commit = process.env.LONGRUN_BUILD_COMMIT;
  return {
    target: target || `${process.platform}-${process.arch}`,
    commit: commit || "source",
  };
}
