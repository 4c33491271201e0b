"""Engines that run one experiment point: the BMv2 testbed, the ns-3 model, and
ns-2 as seed 003's reference for the incast star with plain TCP (never `auto`).

Each is a module with one object implementing `base.Engine`, registered in
order of preference for `engine: auto` (the testbed first: it runs the real
pipeline). Heavy dependencies (Mininet, ns-3) load only when an engine runs.
"""

from . import atscale, bmv2, ns2, sim
from .base import REGISTRY, Engine, resolve

__all__ = ["REGISTRY", "Engine", "atscale", "bmv2", "ns2", "resolve", "sim"]
