"""candle-graph's analysis from Python, for notebooks: the documents of the command line as values.

    import candle_graph as cg

    trace = cg.load("run/trace.pt.trace.json.gz")     # any trace `candle-graph query` reads
    trace.ops()          # per op: calls, host and device self/total time (key_averages + GPU)
    trace.kernels()      # device work per kernel name and device
    trace.steps()        # the profiler steps, wall and device busy time
    trace.gpu()          # per device: busy/idle, compute/communication/memory, overlap
    trace.summary()      # candle-graph/summary/1, as `candle-graph summary` prints it
    trace.query("slowest", limit=10)   # trace-query/1, as `candle-graph query --kind slowest`
    trace.evidence()     # the evidence packet, as `candle-graph import` prints it
    print(trace.report_markdown())     # the Markdown of `candle-graph report`
    cg.sql(["a.jsonl", "b.pt.trace.json"], "SELECT * FROM op_stats")

Everything is computed by the C++ library the command line runs (candle_graph._analysis) and
handed over as the same JSON; this module only parses it and shapes tables. The tables are
pandas DataFrames when pandas can be imported, else lists of dicts (``as_frame=False`` forces
lists). No torch is needed.

Errors: ``candle_graph.TraceError`` (a ValueError) for an unreadable, malformed or untrusted
trace and for SQL errors, naming the file and the line or byte offset; OSError when a file
cannot be read.
"""

import json
import os

from . import _analysis as _native

TraceError = _native.TraceError

__all__ = ["load", "sql", "Trace", "TraceError"]

_DEFAULT_LIMIT = 50
# Enough for every row of any real trace: the tables of ops(), kernels() are unbounded by default.
_ALL_ROWS = 100_000_000


def _pandas():
    try:
        import pandas  # noqa: PLC0415 (optional dependency, imported on first use)
    except ImportError:
        return None
    return pandas


def _table(rows, as_frame):
    """Rows (dicts) as a DataFrame when pandas is importable and wanted, else as they are."""
    if as_frame is False:
        return rows
    pandas = _pandas()
    if pandas is None:
        if as_frame:
            raise ImportError("as_frame=True needs pandas (Debian: python3-pandas)")
        return rows
    # Nested values (a device's streams, a step's statistics) become dotted columns; the row's
    # name (or device) first, as key_averages() prints it.
    if not rows:
        return pandas.DataFrame()
    frame = pandas.json_normalize(rows)
    first = [c for c in ("name", "device") if c in frame.columns]
    return frame[first + [c for c in frame.columns if c not in first]]


def _fspath(path, what="path"):
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} must be a str or os.PathLike, not {type(path).__name__}")
    return os.fsdecode(os.fspath(path))


def _step_arguments(step):
    if step is None:
        return None, False
    if step == "all":
        return None, True
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"step must be a profiler step number (ProfilerStep#N) or \"all\", "
                         f"not {step!r}")
    return step, False


def _limit_argument(limit):
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _ALL_ROWS:
        raise ValueError(f"limit must be an integer from 1 to {_ALL_ROWS}, not {limit!r}")
    return limit


class Trace:
    """One trace, read once by the importer the command line uses; see ``load``."""

    def __init__(self, path, step=None):
        self._path = _fspath(path)
        number, all_steps = _step_arguments(step)
        self._native = _native.LoadedTrace(self._path, number, all_steps)

    @property
    def path(self):
        return self._path

    @property
    def format(self):
        """The input's format: "trace6", "kineto", "legacy-autograd-profiler", ..."""
        return self._native.format

    @property
    def measured(self):
        """The measured region the importer chose ("ProfilerStep#3"); "" for trace/6."""
        return self._native.measured

    # ---- the documents of the command line --------------------------------------------------

    def query(self, kind, limit=_DEFAULT_LIMIT):
        """``candle-graph query TRACE --kind KIND --limit LIMIT``: {gaps, health, result}."""
        if not isinstance(kind, str):
            raise TypeError(f"kind must be a str, not {type(kind).__name__}")
        return json.loads(self._native.query(kind, _limit_argument(limit)))

    def summary(self):
        """``candle-graph summary TRACE``: the candle-graph/summary/1 document."""
        return json.loads(self._native.summary())

    def evidence(self):
        """``candle-graph import TRACE``: the whole evidence packet."""
        return json.loads(self._native.evidence())

    def report_markdown(self):
        """The Markdown report of ``candle-graph report TRACE --markdown FILE``."""
        return self._native.report_markdown()

    # ---- tables -----------------------------------------------------------------------------

    def ops(self, limit=None, as_frame=None):
        """Per op name: calls, host_self_ns, host_total_ns, device_self_ns, device_total_ns
        (torch's key_averages() with the GPU time beside it), heaviest first."""
        return _table(self._items("ops", limit), as_frame)

    def kernels(self, limit=None, as_frame=None):
        """Device work per kernel name and device: calls, total, mean, min, max."""
        return _table(self._items("kernels", limit), as_frame)

    def steps(self, as_frame=None):
        """The profiler steps of a PyTorch trace: wall and device busy time each."""
        return _table(self.query("steps")["result"]["steps"], as_frame)

    def gpu(self, as_frame=None):
        """One row per device of the GPU analysis (nested parts as dotted columns)."""
        return _table(self.query("gpu")["result"]["devices"], as_frame)

    def _items(self, kind, limit):
        return self.query(kind, _ALL_ROWS if limit is None else limit)["result"]["items"]

    def __repr__(self):
        return f"<candle_graph.Trace {self._path!r} format={self.format!r}>"


def load(path, step=None):
    """Reads a trace of any format the command line reads: trace/6 JSONL, a PyTorch profiler trace
    (Kineto or legacy JSON, plain or .gz), candle-graph's Chrome export, or a verified bundle
    directory. ``step``: for PyTorch traces, the ProfilerStep#N to measure or "all" (default:
    the last complete step), as ``--step``."""
    return Trace(path, step)


def sql(sources, statement, limit=None, timeout=30.0, as_frame=None):
    """``candle-graph sql SOURCE... STATEMENT``: one read-only SQL statement over traces and
    candle-graph/sql/1 databases (docs/sql.md). Returns its rows as a table (see ``ops``); with
    ``limit``, at most that many rows."""
    if isinstance(sources, (str, bytes, os.PathLike)):
        sources = [sources]
    paths = [_fspath(s, "a source") for s in sources]
    if not isinstance(statement, str):
        raise TypeError(f"statement must be a str, not {type(statement).__name__}")
    if limit is not None:
        _limit_argument(limit)
    document = json.loads(_native.sql(paths, statement, limit, float(timeout)))
    rows = [dict(zip(document["columns"], row)) for row in document["rows"]]
    if as_frame is not False and _pandas() is not None:
        return _pandas().DataFrame(rows, columns=document["columns"])
    return _table(rows, as_frame)
