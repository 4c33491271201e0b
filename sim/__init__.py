"""p4-incast's simulation engine on ns-3: `p4incast.sim.engine.run_point` (see sim/MODEL.md)."""
