"""The Unity side of AI2-THOR, played by a test double that speaks ai2thor 5.0.0's FIFO protocol.

This package imports nothing of ours (relative imports only), so the double starts as a bare
``unity`` package in its own process; the lab imports it as ``sim.thor.unity``.
"""

from .protocol import FifoPeer, event, load_json, wire, write_executable

__all__ = ["FifoPeer", "event", "load_json", "wire", "write_executable"]
