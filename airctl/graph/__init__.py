"""airctl's one graph model. FX graphs and GE dumps both load into it (see :mod:`airctl.io`)."""

from airctl.graph.model import Edge, Graph, Node

__all__ = ["Edge", "Graph", "Node"]
