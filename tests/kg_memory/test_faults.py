from kg_memory import WorldMemory
def test_probe(store):
    m = WorldMemory.create(store, "probe_x1", "example_home")
    assert m.version == 0
