"""Framework integrations: hoprag's traversal as a LangChain retriever
(`integrations.langchain.GraphRetriever`, the `langchain` extra) and as a LlamaIndex retriever
(`integrations.llamaindex.GraphRetriever`, the `llamaindex` extra), sharing their option checks
(`integrations.retriever_options`, which imports neither framework). Each module imports its
framework when imported, so this package imports none of them; the agent tool's own
integrations (LangChain tool, MCP) live with it in `hoprag.tools`."""
