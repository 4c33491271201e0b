"""Pure window policies of the receiver agent (no I/O): NewDCTCP-rx, ICTCP, RCC."""
