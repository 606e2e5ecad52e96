"""candle-graph from Python: execution evidence for PyTorch updates and inference calls.

``candle_graph.load(path)`` and ``candle_graph.sql(sources, statement)`` analyse any trace the
``candle-graph`` command line reads, with the same C++ library and without torch (see
``help(candle_graph.analysis)``).

``candle_graph.torch`` (needs torch) records one PyTorch training update or inference call as a
candle-graph/trace/6 file (see ``help(candle_graph.torch.TorchCapture)``); the ``candle-graph``
command line and ``candle_graph.load`` read it.
"""

from .analysis import Trace, TraceError, load, sql

__all__ = ["load", "sql", "Trace", "TraceError", "analysis", "torch"]
