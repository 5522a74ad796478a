/**
 * Release signatures with minisign (Debian's `minisign`; `brew install minisign`): the release's
 * SHA256SUMS is signed with a passwordless secret key (`minisign -G -W`) whose file
 * LONGRUN_MINISIGN_KEY names, into SHA256SUMS.minisig beside it; install.sh checks it against the
 * public key a user was given through another channel (`--pubkey`, LONGRUN_MINISIGN_PUBKEY).
 * SHA256SUMS lists every archive's digest, so one signature covers the whole release.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

export const SIGNATURE = "SHA256SUMS.minisig";

/** Refuses, before a release is written, a key that is not there or a machine without minisign. */
export function checkSigningKey(keyFile: string): void {
  if (!existsSync(keyFile)) throw new Error(`LONGRUN_MINISIGN_KEY names ${keyFile}, which does not exist: give the path of a minisign secret key file (minisign -G -W -s FILE)`);
  if (!/^untrusted comment:/.test(readFileSync(keyFile, "utf8"))) throw new Error(`LONGRUN_MINISIGN_KEY names ${keyFile}, which is not a minisign secret key file`);
  const v = spawnSync("minisign", ["-v"], { stdio: "ignore" });
  if (v.error) throw new Error("LONGRUN_MINISIGN_KEY is set but minisign is not installed (apt-get install minisign): the release cannot be signed");
}

/**
 * Signs `file` with the secret key in `keyFile` into `file.minisig`, `trusted` as its trusted
 * (signed) comment. Nothing is read from a terminal: a key with a password fails.
 */
export function signSums(file: string, keyFile: string, trusted: string): void {
  checkSigningKey(keyFile);
  const r = spawnSync("minisign", ["-S", "-s", keyFile, "-m", file, "-x", `${file}.minisig`, "-t", trusted], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  if (r.status !== 0) {
    const why = `${r.stderr ?? ""}${r.stdout ?? ""}`.trim().split("\n").filter((l) => !/^Password:/.test(l)).join(" ") || `exit ${r.status}`;
    throw new Error(`minisign could not sign ${file} with ${keyFile} (${why}); the key must have no password: make one with minisign -G -W`);
  }
}
