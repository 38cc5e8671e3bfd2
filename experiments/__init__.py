"""Experiments that compose the packages (simulator, memory, retrieval) into measurements."""
