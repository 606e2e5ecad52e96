"""The memory profile of real training updates against the rules of trace6.md §7.1 worked out here.

The capture records every allocation and free of the CPU allocator during one update of a real
model; `candle-graph query --kind memory` reports the profile. The expected profile is computed
below from the trace's `memory` and `device_memory` lines read back with json, following §7.1
step by step (order by time, allocations before frees, then tensor id; live bytes per device and
per category; a timeline point per event; peaks; the live set at the global peak; the retention at
the first event of the backward pass). Nothing here calls candle-graph's code but its CLI.
"""

import pytest

from conftest import Setup, capture_update, cli_json, events, read_trace

CASES = [("mlp", "sgd"), ("cnn", "adam"), ("gru", "adam")]


def in_backward(spans, span_id):
    # The span, or one of its ancestors, is tagged with the backward step.
    while span_id is not None:
        span = spans[span_id]
        if span.get("step") == "backward":
            return True
        span_id = span.get("parent_id")
    return False


def expected_profile(trace):
    spans = {s["id"]: s for s in events(trace, "span_start")}
    capacity = {}
    for sample in events(trace, "device_memory"):
        d = sample["device"]
        capacity[d] = max(capacity.get(d, 0), sample["used_bytes"] + sample["free_bytes"])
    order = sorted(events(trace, "memory"),
                   key=lambda m: (m["timestamp_ns"], m["action"] != "alloc", m["tensor_id"]))
    live, by_category, devices, timeline = {}, {}, {}, []
    summary = {"alloc_count": 0, "free_count": 0, "total_alloc_bytes": 0, "peak_bytes": 0,
               "peak_timestamp_ns": 0, "peak_device": "", "peak_by_category": {},
               "autograd_retained_bytes": 0}
    breakdown, retained = [], None
    for m in order:
        d = m["device"]
        dev = devices.setdefault(d, {"device": d, "capacity_bytes": capacity.get(d, 0),
                                     "peak_bytes": 0, "peak_timestamp_ns": 0, "alloc_count": 0,
                                     "free_count": 0, "live": 0})
        cats = by_category.setdefault(d, {})
        if m["action"] == "alloc":
            summary["alloc_count"] += 1
            dev["alloc_count"] += 1
            summary["total_alloc_bytes"] += m["bytes"]
            category = m.get("category", "other").lower()
            dev["live"] += m["bytes"]
            cats[category] = cats.get(category, 0) + m["bytes"]
            live[m["tensor_id"]] = {"tensor_id": m["tensor_id"], "span_id": m["span_id"],
                                    "op_name": m.get("op_name"), "bytes": m["bytes"],
                                    "shape": m.get("shape", []), "dtype": m["dtype"],
                                    "device": d, "category": category}
        else:
            summary["free_count"] += 1
            dev["free_count"] += 1
            # Every free of these captures pairs with an allocation made inside the update (the
            # capture drops the frees of memory allocated before it: pre_capture_frees).
            freed = live.pop(m["tensor_id"])
            dev["live"] -= freed["bytes"]
            cats[freed["category"]] -= freed["bytes"]
        cap = dev["capacity_bytes"]
        timeline.append({"timestamp_ns": m["timestamp_ns"], "device": d, "live_bytes": dev["live"],
                         "heap_bytes": dev["live"],
                         "free_bytes": max(0, cap - dev["live"]) if d in capacity else 0,
                         "by_category": dict(cats)})
        if dev["live"] > dev["peak_bytes"]:
            dev["peak_bytes"], dev["peak_timestamp_ns"] = dev["live"], m["timestamp_ns"]
        if dev["live"] > summary["peak_bytes"]:
            summary.update(peak_bytes=dev["live"], peak_timestamp_ns=m["timestamp_ns"],
                           peak_device=d, peak_by_category=dict(cats))
            breakdown = sorted(live.values(), key=lambda a: (-a["bytes"], a["tensor_id"]))
        if retained is None and in_backward(spans, m["span_id"]):
            retained = cats.get("activation", 0)
    summary["autograd_retained_bytes"] = retained or 0
    by_device = [{k: v for k, v in dev.items() if k != "live"}
                 for _, dev in sorted(devices.items())]
    return {"summary": summary, "timeline": timeline, "by_device": by_device,
            "peak_breakdown": breakdown}


@pytest.mark.parametrize("kind,optimizer", CASES)
def test_memory_profile_of_a_real_update_follows_the_rules(kind, optimizer, trace_path):
    cap = capture_update(Setup(kind, optimizer=optimizer), trace_path)
    trace = read_trace(trace_path)
    want = expected_profile(trace)
    got = cli_json("query", trace_path, "--kind", "memory")["result"]
    # A real update: memory moved, the peak lies above zero, and the backward pass was seen.
    assert cap.summary["pre_capture_frees"] == 0
    assert want["summary"]["peak_bytes"] > 0 and want["summary"]["autograd_retained_bytes"] > 0
    assert len(got["timeline"]) == len(events(trace, "memory"))
    assert got["summary"] == want["summary"]
    assert got["by_device"] == want["by_device"]
    assert got["timeline"] == want["timeline"]
    assert got["peak_breakdown"] == want["peak_breakdown"]
    # The peak is the highest point of the timeline, and the capture's own count agrees.
    assert got["summary"]["peak_bytes"] == max(p["live_bytes"] for p in got["timeline"])
    assert got["summary"]["peak_bytes"] == cap.summary["peak_bytes"]
