/**
 * Loads a module of this program by its path under src/ (`"root"`, `"cli/main"`), from the
 * sources or, in the compiled executable, from its embedded bundle (scripts/compile.ts makes each
 * such module an entry point of its own). The path is computed, so the bundler leaves the module
 * out of the bundle that loads it: a hook process never loads the servers' code unless it needs it.
 * Two bundles hold two copies of shared classes, so errors that cross one are told by `kind`
 * (core/errors.ts `errorKind`), never by `instanceof`.
 */
export function loadOwn<T>(path: string): Promise<T> {
  return import(ownUrl(path)) as Promise<T>;
}

/** The URL of a module of this program by its path under src/ (a Worker's script, say): the source, or the embedded bundle. */
export function ownUrl(path: string): string {
  const self = process.argv[1] ?? "";
  // embedded: /$bunfs/root/… (B:/~BUN/root/… on Windows)
  const embedded = /^(\/\$bunfs\/|[A-Za-z]:[\\/]~BUN[\\/])/.test(self);
  return embedded ? `${self.slice(0, Math.max(self.lastIndexOf("/"), self.lastIndexOf("\\")))}/${path}.js` : new URL(`../${path}.ts`, import.meta.url).href;
}
