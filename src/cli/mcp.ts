/** `longrun mcp [--root DIR]`: the MCP server over stdio (agent side only). */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer } from "../mcp/server.ts";
import { Dispatcher } from "../rpc/dispatcher.ts";
import { allMethods } from "../rpc/methods/index.ts";
import { InvalidRootError, resolveRoot } from "../root.ts";
import { RootRegistry } from "../roots.ts";

export async function runMcp(options: { root: string | null }): Promise<number> {
  let root: string;
  try {
    root = resolveRoot(options.root ?? process.cwd());
  } catch (e) {
    if (!(e instanceof InvalidRootError)) throw e;
    process.stderr.write(`longrun: ${e.message}\n`);
    return 2;
  }
  const roots = new RootRegistry({ defaultRoot: root, allow: [root] });
  const dispatcher = new Dispatcher({ methods: allMethods(), roots });
  const server = createMcpServer({ dispatcher, caller: { side: "agent", via: "mcp" } });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.on("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await dispatcher.drained();
  await server.close().catch(() => {});
  await roots.closeAll();
  return 0;
}
