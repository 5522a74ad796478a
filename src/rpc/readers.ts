/**
 * Who reads a refusal from a root: its language and its grant path (src/hooks/grant_path.ts),
 * for the root a request names (or the default one). Never fails: a root that cannot be
 * resolved is read in English, with the person's command as the grant path.
 */
import { dirname, join } from "node:path";
import { refusalSetup } from "../hooks/grant_path.ts";
import { ROOT_PATHS } from "../root/layout.ts";
import type { RootRegistry } from "../root/registry.ts";
import type { Readers } from "./errors.ts";

export function readersFor(roots: RootRegistry, named?: string): Readers {
  let dir: string;
  try {
    dir = roots.resolve(named);
  } catch {
    return { lang: "en", approve: null };
  }
  // the settings sit beside the pending checkpoint (in `.longrun/`, or a server project's state directory)
  const pending = roots.pendingPath(named);
  return refusalSetup(dir, pending ? join(dirname(pending), "settings.json") : join(dir, ROOT_PATHS.settings));
}
