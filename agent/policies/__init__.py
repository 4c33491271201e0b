"""Pure window policies of the receiver agent (no I/O): NewDCTCP-rx, newdctcp-budget,
ICTCP, RCC, and the Python reference of the BPF data path that enforces them."""
