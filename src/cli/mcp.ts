/** `longrun mcp [--root DIR]`: the MCP server over stdio (agent side only). */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer } from "../mcp/server.ts";
import { Dispatcher } from "../rpc/dispatcher.ts";
import { allMethods } from "../rpc/methods/index.ts";
import { RootRegistry } from "../roots.ts";
import { rootAtStart } from "./root_arg.ts";

export async function runMcp(options: { root: string | null }): Promise<number> {
  const root = rootAtStart(options.root);
  if (root === null) return 2;
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
