"""Builds the seed corpus of every libFuzzer target from the fixtures (./run fuzz and the fuzz
stage of ./run test call it). Seeds stay small (libFuzzer's -max_len is 64 KiB and CI fuzzes each
target for seconds): real traces are cut down to their first events and re-serialised as valid
JSON, CSV reports to their first lines. Inputs that carry control bytes (see each target's
header comment) get them prepended here.

Usage: python3 make_seeds.py REPO_ROOT OUT_DIR
Writes OUT_DIR/<target>/* for every target; an existing OUT_DIR/<target> is kept (it is the
campaign's corpus) and only gains the seeds.
"""
import gzip
import json
import pathlib
import re
import shutil
import sys

ROOT = pathlib.Path(sys.argv[1]).resolve()
OUT = pathlib.Path(sys.argv[2])
SHARED = ROOT.parent / "shared" / "fixtures"
FUZZ = ROOT / "fuzz"
MAX_SEED = 48 * 1024

# The file names of fuzz_nsight_csv, in the order of kNames in nsight_csv_fuzz.cpp.
NSIGHT_NAMES = [
    "run_cuda_gpu_kern_sum.csv", "run_gpukernsum.csv", "run_cuda_api_sum.csv",
    "run_cudaapisum.csv", "run_cuda_gpu_mem_time_sum.csv", "run_gpumemtimesum.csv",
    "run_cuda_gpu_mem_size_sum.csv", "run_gpumemsizesum.csv", "run_nvtx_gpu_proj_trace.csv",
    "run_cuda_gpu_trace.csv", "run_gputrace.csv", "run_nvtx_pushpop_trace.csv",
    "run_nvtx_pushpop_sum.csv", "run_nvtxppsum.csv", "run_nvtx_sum.csv", "run_nvtxsum.csv",
    "report.csv", "stats.txt", "nsys-stdout.log"]


def target_dir(name):
    d = OUT / name
    d.mkdir(parents=True, exist_ok=True)
    return d


def read_maybe_gzip(path):
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def small_trace(doc):
    """The first events of a Kineto trace (halving until it fits), as compact JSON bytes."""
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    keep = len(events)
    while True:
        cut = events[:keep]
        out = dict(doc, traceEvents=cut) if isinstance(doc, dict) else cut
        if isinstance(out, dict) and isinstance(out.get("deviceProperties"), list):
            # Only what the importer reads of each GPU: the rest is kilobytes per GPU.
            out["deviceProperties"] = [{"id": d.get("id"), "name": d.get("name")}
                                       for d in out["deviceProperties"][:2]]
        text = json.dumps(out, separators=(",", ":")).encode()
        if len(text) <= MAX_SEED or keep <= 1:
            return text
        keep //= 2


def kineto_seeds():
    """(name, bytes) of small valid PyTorch traces: Kineto objects and the same events as a
    legacy bare array."""
    if not SHARED.is_dir():
        return []
    seeds = []
    for path in sorted((SHARED / "pytorch-chrome-trace").glob("*.json*")):
        if path.stat().st_size > 400 * 1024:
            continue  # the multi-MB traces add nothing the small ones lack, only decode time
        doc = json.loads(read_maybe_gzip(path))
        stem = path.name.split(".json")[0]
        seeds.append((stem, small_trace(doc)))
        seeds.append((stem + "-legacy", small_trace(doc["traceEvents"])))
    return seeds


def pytorch_import():
    d = target_dir("pytorch_import")
    for i, (stem, text) in enumerate(kineto_seeds()):
        # Control byte: 0 plain, 1 gzip; every third one also `--step all`.
        control = (i % 2) | (2 if i % 3 == 0 else 0)
        (d / stem).write_bytes(bytes([control]) + text)


def pytorch_stream():
    d = target_dir("pytorch_stream")
    for stem, text in kineto_seeds():
        # The chunk boundary inside the first event, and inside the otherData value if any.
        for marker in (b'"traceEvents":[{', b'"otherData":{', b"[{"):
            at = text.find(marker)
            if at >= 0:
                cut = min(at + len(marker) + 3, 4096)
                (d / f"{stem}-cut{cut}").write_bytes(bytes([cut & 0xFF, cut >> 8]) + text)
                break


def trace_fixtures(target):
    """The trace/6 fixtures as they are (the targets that read trace/6 files)."""
    d = target_dir(target)
    for path in sorted((ROOT / "tests" / "fixtures").glob("**/*.jsonl")):
        shutil.copyfile(path, d / f"{path.parent.name}-{path.name}")


def parallel_read():
    """The trace/6 fixtures behind a control byte (parallel_read_fuzz.cpp) that varies from one
    to the next: 2 or 3 threads, file or pipe, and chunks from 1 byte to the default."""
    d = target_dir("parallel_read")
    paths = sorted((ROOT / "tests" / "fixtures").glob("**/*.jsonl"))
    small = [p for p in paths if p.stat().st_size < MAX_SEED]
    for i in range(4 * len(small)):
        path = small[i % len(small)]
        control = (i % 2) | (2 if i // 2 % 2 else 0) | (4 if i % 5 == 0 else 0)
        control |= (i * 7 % 32) << 3
        name = f"{path.parent.name}-{path.stem}-{control:02x}"
        (d / name).write_bytes(bytes([control]) + path.read_bytes())


def ranks():
    """Recipes of rank sets (ranks_fuzz.cpp reads any bytes as generated traces): small trace/6
    fixtures behind a control byte for 2 to 4 ranks, a duplicate rank in every other one."""
    d = target_dir("ranks")
    paths = sorted((ROOT / "tests" / "fixtures").glob("**/*.jsonl"))
    small = [p for p in paths if p.stat().st_size < MAX_SEED][:24]
    for i, path in enumerate(small):
        control = (i % 3) | (4 if i % 2 else 0)
        (d / f"{path.parent.name}-{path.stem}-{control:02x}").write_bytes(
            bytes([control]) + path.read_bytes())


def committed(name):
    d = target_dir(name)
    for path in sorted((FUZZ / "seeds" / name).glob("*")):
        shutil.copyfile(path, d / path.name)


def nsight_csv():
    d = target_dir("nsight_csv")
    files = sorted((ROOT / "tests" / "fixtures" / "nsight").glob("*/*"))
    if SHARED.is_dir():
        files += sorted((SHARED / "nsys").glob("*"))
    for path in files:
        if path.name.endswith(".md"):
            continue
        lower = path.name.lower()
        index = NSIGHT_NAMES.index("report.csv")
        if lower.endswith((".txt", ".log")):
            index = NSIGHT_NAMES.index("stats.txt")
        for i, name in enumerate(NSIGHT_NAMES[:16]):
            if name[len("run_"):-len(".csv")] in lower:
                index = i
                break
        lines = path.read_bytes().splitlines(keepends=True)
        text = b"".join(lines[:40])  # the header and enough rows for every code path
        (d / f"{path.parent.name}-{path.name}").write_bytes(bytes([index]) + text)


def sql_statement():
    d = target_dir("sql_statement")
    text = (ROOT / "docs" / "sql.md").read_text()
    for i, block in enumerate(re.findall(r"```sql\n(.*?)```", text, re.S)):
        # Control byte: JSON, CSV or table rendering, with and without a limit.
        (d / f"docs-{i}").write_bytes(bytes([i % 8]) + block.encode())
    committed("sql_statement")


trace_fixtures("trace_reader")
trace_fixtures("chrome_export")
trace_fixtures("evidence")
trace_fixtures("sqlite_export")
trace_fixtures("compare")
parallel_read()
ranks()
pytorch_import()
pytorch_stream()
committed("pytorch_stream")  # inputs that once broke the target (docs/testing.md)
committed("chrome_import")
nsight_csv()
committed("bundle_manifest")
sql_statement()
for d in sorted(OUT.iterdir()):
    print(f"{d.name}: {sum(1 for _ in d.iterdir())} inputs")
