"""Readers and writers around the graph model (one module per format)."""
