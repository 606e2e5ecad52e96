"""candle-graph from Python: execution evidence for PyTorch updates and inference calls.

``candle_graph.torch`` records one PyTorch training update or inference call as a
candle-graph/trace/6 file (see ``help(candle_graph.torch.TorchCapture)``); the ``candle-graph``
command line reads it (``report``, ``view``, ``compare``, ``export``).
"""

__all__ = ["torch"]
