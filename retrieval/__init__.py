"""Subgraph retrieval for updates and tasks: full graph (R-), entity selection (R+) and
search-based matching (RS). Built in the retrieval issue; nothing is exported yet."""

__all__: list[str] = []
