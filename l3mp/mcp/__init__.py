"""The MCP server: l3mp's operations as tools, resources and prompts for language-model agents."""
