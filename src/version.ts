/** The product version (kept equal to package.json's by a test) and the protocol version. */
export const VERSION = "0.1.0";
/** Bumped when a released method's params or results change incompatibly. */
export const PROTOCOL_VERSION = "1.0";
