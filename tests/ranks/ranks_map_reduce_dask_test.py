"""The map stage of `candle-graph ranks` fanned out over a dask.distributed cluster.

A LocalCluster of worker processes stands in for the cluster: each worker `subprocess.run`s
`candle-graph ranks --map` on one rank's trace, as a real fan-out runs it on the rank's node,
and the reduce of their summaries must equal the local run byte for byte. Needs Debian's
python3-distributed (./run installs it); skipped, saying so, without it.
"""

import os
import subprocess

import pytest

try:
    from distributed import Client, LocalCluster
except ImportError as e:  # the package is optional: say what to install
    pytest.skip(f"dask.distributed is not importable ({e}); install python3-distributed",
                allow_module_level=True)

CG = os.path.abspath(os.environ.get("CG_BINARY", "build/candle-graph"))
FIXTURES = os.environ.get("CG_SHARED_FIXTURE_DIR", "../shared/fixtures")
DLRM = os.path.join(FIXTURES, "pytorch-chrome-trace", "ranks-param-dlrm-8rank-v100")


def test_map_on_dask_workers_then_reduce_equals_the_local_run(tmp_path):
    if not os.path.isdir(DLRM):
        pytest.skip(f"fixture {DLRM} not present")
    traces = sorted(os.path.join(DLRM, n) for n in os.listdir(DLRM) if n.endswith(".json"))
    summaries = [str(tmp_path / f"{i}.summary.json") for i in range(len(traces))]
    commands = [[CG, "ranks", "--map", t, "-o", s] for t, s in zip(traces, summaries)]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, local_directory=str(tmp_path / "dask")) as cluster, \
            Client(cluster) as client:
        worker_pids = set(client.run(os.getpid).values())
        assert os.getpid() not in worker_pids and len(worker_pids) == 2
        # subprocess.run itself is the task: importable, so the workers unpickle it by name.
        futures = client.map(subprocess.run, commands, capture_output=True, text=True,
                             check=False, pure=False)
        results = client.gather(futures)
    for cmd, r in zip(commands, results):
        assert r.returncode == 0, (cmd, r.stderr)

    local = subprocess.run([CG, "ranks", DLRM], capture_output=True, check=True).stdout
    reduced = subprocess.run([CG, "ranks", "--reduce", *reversed(summaries)],
                             capture_output=True, check=True).stdout
    assert len(summaries) == 8
    assert reduced == local
