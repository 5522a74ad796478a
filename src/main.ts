/** Entry point of the `longrun` executable (and of `bun src/main.ts` / `deno run -A src/main.ts`). */
import { main } from "./cli/main.ts";

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`longrun: ${(e as Error)?.stack ?? e}\n`);
    process.exit(1);
  },
);
