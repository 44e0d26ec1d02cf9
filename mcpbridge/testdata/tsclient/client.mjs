// Drives ledgerbase-mcp with the official MCP TypeScript SDK client, as
// desktop assistants embed it: the client validates every structured result
// against the tool's outputSchema, so a result it refuses is reported here as
// a thrown error, exactly as a model would (not) see it.
//
// Usage (the Go test in mcpbridge runs it):
//   MCP_URL=http://127.0.0.1:8090/mcp node client.mjs < calls.json
//   MCP_COMMAND=/path/ledgerbase-mcp node client.mjs < calls.json   (stdio;
//   LEDGERBASE_URL and LEDGERBASE_API_KEY pass through to the bridge)
// calls.json is [{"name": "list_invoices", "arguments": {"limit": 2}}, ...].
// It prints {"tools": [...names], "calls": [{"name", "result" | "thrown"}]}.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const calls = JSON.parse(readFileSync(0, "utf8"));
const transport = process.env.MCP_URL
  ? new StreamableHTTPClientTransport(new URL(process.env.MCP_URL))
  : new StdioClientTransport({
      command: process.env.MCP_COMMAND,
      args: JSON.parse(process.env.MCP_ARGS || "[]"),
      env: process.env,
      stderr: "inherit",
    });

const client = new Client({ name: "ledgerbase-ts-test", version: "1" });
await client.connect(transport);
// listTools caches each tool's outputSchema: callTool validates against it.
const { tools } = await client.listTools();
const out = { tools: tools.map((t) => t.name), calls: [] };
for (const call of calls) {
  try {
    const result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
    out.calls.push({ name: call.name, result });
  } catch (e) {
    out.calls.push({ name: call.name, thrown: { code: e.code ?? null, message: String(e.message ?? e) } });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
