"""Engines that run one experiment point: the BMv2 testbed and the ns-3 model.

Each is a module with one object implementing `base.Engine`, registered in
order of preference for `engine: auto` (the testbed first: it runs the real
pipeline). Heavy dependencies (Mininet, ns-3) load only when an engine runs.
"""

from . import atscale, bmv2, sim
from .base import REGISTRY, Engine, resolve

__all__ = ["REGISTRY", "Engine", "atscale", "bmv2", "resolve", "sim"]
