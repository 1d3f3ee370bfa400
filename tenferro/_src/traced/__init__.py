"""Traced mode: staging, graphs, optimisation passes, the executor, jit and save/load."""

from .graph import Graph, load
from .jit import jit, save
from .staging import StagingTrace, TracedTensor
from .trace import ShapeDtype, make_graph, trace

__all__ = ["Graph", "ShapeDtype", "StagingTrace", "TracedTensor", "jit", "load", "make_graph",
           "save", "trace"]
