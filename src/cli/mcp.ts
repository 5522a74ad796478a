/**
 * `longrun mcp [--root DIR] [--tools SET]`: the MCP server over stdio (agent side only), for one
 * root. `--tools` picks the tools: `default`, `research`, `all`, or a comma list of set and tool
 * names; a name that is neither stops the start (exit 2) with the list of what exists.
 */
import { createMcpServer } from "../mcp/server.ts";
import { LineTransport } from "../mcp/stdio.ts";
import { selectTools, ToolSetError } from "../mcp/tool_sets.ts";
import { Dispatcher } from "../rpc/dispatcher.ts";
import { allMethods } from "../rpc/methods/index.ts";
import { RootRegistry } from "../root/registry.ts";
import type { ServerStore } from "../store/server_config.ts";
import { rootAtStart } from "./root_arg.ts";

export async function runMcp(options: { root: string | null; tools?: string | null; server?: ServerStore | null }): Promise<number> {
  let tools;
  try {
    tools = selectTools(options.tools);
  } catch (e) {
    if (!(e instanceof ToolSetError)) throw e;
    process.stderr.write(`longrun: ${e.message}\n`);
    return 2;
  }
  // one root: the directory, or the project on a libSQL server (--store)
  const root = options.server ? null : rootAtStart(options.root);
  if (root === null && !options.server) return 2;
  const roots = options.server ? new RootRegistry({ defaultRoot: null, server: options.server, webhooks: true }) : new RootRegistry({ defaultRoot: root, allow: [root!], webhooks: true });
  const dispatcher = new Dispatcher({ methods: allMethods(), roots });
  const server = createMcpServer({ dispatcher, caller: { side: "agent", via: "mcp" }, tools });
  const transport = new LineTransport(process.stdin, process.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  await closed;
  await dispatcher.drained();
  await server.close().catch(() => {});
  await roots.closeAll();
  return 0;
}
