/** Entry point of the `longrun` executable (and of `bun src/main.ts` / `deno run -A src/main.ts`). */
import { main } from "./cli/main.ts";

const code = await main(process.argv.slice(2));
process.exit(code);
