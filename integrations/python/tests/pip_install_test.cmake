# CTest cg_python_pip_install: `pip install` of the package into a fresh
# `python3 -m venv --system-site-packages`, offline (--no-build-isolation --no-index), then the
# installed package used from the venv: it must be the venv's copy, the analysis must work, and
# (when the capture module is built) a captured update must give a trace.
# Arguments: PYTHON, SOURCE (integrations/python), BUILD_DIR, WORK, FIXTURE, WITH_CAPTURE.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
# A copy of the package sources: pip builds in the source tree (build/, *.egg-info), and the test
# must not write into the repository.
file(MAKE_DIRECTORY ${WORK}/src)
file(COPY ${SOURCE}/candle_graph ${SOURCE}/setup.py ${SOURCE}/pyproject.toml
     DESTINATION ${WORK}/src PATTERN __pycache__ EXCLUDE)
run(${PYTHON} -m venv --system-site-packages ${WORK}/venv)
set(venv_python ${WORK}/venv/bin/python)
run(${CMAKE_COMMAND} -E env --unset=PYTHONPATH CANDLE_GRAPH_CMAKE_BUILD_DIR=${BUILD_DIR}
    PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
    ${venv_python} -m pip install --no-build-isolation --no-index --no-deps ${WORK}/src)

# Used from elsewhere than the sources, with no PYTHONPATH: what Python finds is what pip put in
# the venv.
set(check [=[
import os, sys
import candle_graph as cg
venv = os.path.realpath(sys.argv[1])
where = os.path.realpath(cg.__file__)
assert where.startswith(venv + os.sep), f"candle_graph imported from {where}, not the venv"
ops = cg.load(sys.argv[2]).ops(as_frame=False)
assert ops and all("calls" in row for row in ops), ops[:2]
print("analysis ok", len(ops))
if sys.argv[3] == "ON":
    import torch
    import candle_graph.torch as cgt
    model = torch.nn.Linear(4, 2)
    x = torch.randn(3, 4)
    with cgt.TorchCapture(sys.argv[4], model, entrypoint="pip::update", step=1) as cap:
        model(x).sum().backward()
    assert cap.summary["engine"] == "native", cap.summary
    assert os.path.getsize(sys.argv[4]) > 0
    print("capture ok", cap.summary["ops"])
]=])
file(WRITE ${WORK}/check.py "${check}")
run(${CMAKE_COMMAND} -E chdir ${WORK} ${CMAKE_COMMAND} -E env --unset=PYTHONPATH
    ${venv_python} ${WORK}/check.py ${WORK}/venv ${FIXTURE} ${WITH_CAPTURE} ${WORK}/trace.jsonl)
message(STATUS "${out}")
