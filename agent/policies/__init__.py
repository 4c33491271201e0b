"""Pure window policies of the receiver agent (no I/O): NewDCTCP-rx, newdctcp-budget,
and the Python reference of the BPF data path that enforces them. ICTCP and RCC,
which the simulator runs too, are in p4incast/policies."""
