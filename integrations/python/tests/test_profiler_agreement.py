"""Op counts of candle_graph.torch against torch.autograd.profiler.profile() on one update whose
forward ends in ``(h + a).mean(dim=1)``.

Such an update runs ops that call themselves under another overload: ``mean`` divides its sum
with ``div_(Scalar)``, which wraps the scalar and dispatches ``div_(Tensor)``, and MeanBackward1
does the same with ``div``. Each dispatch is its own RecordFunction, so both observers see two
nested ``aten::div_`` (and two ``aten::div``). The capture writes both; the profiler collects both
too, but ``profile.function_events`` is post-processed by torch's ``EventList._remove_dup_nodes``
(torch/autograd/profiler_util.py), which drops an event whose parent has the same name and no
other child. So the capture is not wrong: it agrees with the profiler's own events before that
step, and differs from ``function_events`` by exactly the events that step removes.

Every expected count below comes from torch's profiler: its parsed events before the merge
(``prof._parse_kineto_results(prof.kineto_results)``, the list ``function_events`` is built
from) and torch's own event tree over them (``EventList._populate_cpu_children``), never from
the capture's code.
"""

import collections

import torch
from torch.autograd import profiler as torch_profiler
from torch.autograd.profiler_util import EventList

import candle_graph.torch as cgt
from conftest import events, read_trace

USER_SCOPE = 7  # at::RecordScope::USER_SCOPE (1.13): record_function ranges, not ops


class MeanHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 32)
        self.a = torch.nn.Parameter(torch.randn(32))

    def forward(self, x):
        h = torch.relu(self.fc(x))
        return (h + self.a).mean(dim=1)


def seeded_setup():
    torch.manual_seed(0)
    model = MeanHead()
    x, y = torch.randn(8, 16), torch.randn(8)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def update(cap=None):
        opt.zero_grad()
        if cap is None:
            loss = torch.nn.functional.mse_loss(model(x), y)
        else:
            with cap.span("forward", step="forward"):
                loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    return model, update


def inside(e, outer):
    return e.time_range.start >= outer.time_range.start and e.time_range.end <= outer.time_range.end


def op_names(evs, window):
    return collections.Counter(e.name for e in evs if e.scope != USER_SCOPE and inside(e, window))


def test_counts_agree_with_the_profilers_events_except_the_ones_it_merges(trace_path):
    model, update = seeded_setup()
    update()
    update()
    # Made before the capture: its constructor runs torch.zeros(1), profiler machinery.
    window = torch_profiler.record_function("cg_test_update")
    with torch_profiler.profile() as prof:
        with cgt.TorchCapture(trace_path, model, entrypoint="test::mean_head", step=3) as cap:
            with window:
                update(cap)

    captured = collections.Counter(o["op_name"] for o in events(read_trace(trace_path), "op"))
    assert sum(captured.values()) == cap.summary["ops"] > 50

    # torch's events before the merge, and torch's tree over them.
    parsed = EventList(prof._parse_kineto_results(prof.kineto_results))
    parsed._populate_cpu_children()
    (range_event,) = [e for e in parsed if e.name == "cg_test_update"]
    collected = op_names(parsed, range_event)
    merged_away = collections.Counter(
        e.name for e in parsed
        if e.scope != USER_SCOPE and inside(e, range_event) and e.cpu_parent is not None
        and e.cpu_parent.name == e.name and len(e.cpu_parent.cpu_children) == 1)
    (final_range,) = [e for e in prof.function_events if e.name == "cg_test_update"]
    reported = op_names(prof.function_events, final_range)

    # The capture records every op the profiler collected, no more and no fewer.
    assert captured == collected, (dict(captured - collected), dict(collected - captured))
    # function_events lacks exactly the events torch's merge step removes...
    assert collected - reported == merged_away and not reported - collected
    # ...and that is the whole difference with the capture: mean's div_ or its backward's div is
    # among them (the case this test was written for). Not always both: torch nests events by
    # their start and duration, each rounded to a microsecond by Kineto, so an inner dispatch
    # can end a microsecond after its outer one and then nests in nothing and is not merged (seen
    # once in CI, for div_). The assertions above hold either way.
    assert captured - reported == merged_away
    assert merged_away["aten::div_"] + merged_away["aten::div"] >= 1, dict(merged_away)
