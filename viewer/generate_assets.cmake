# cmake -DSTATE=<file from viewer_state.cmake> -DSOURCE=<viewer/> -DDIST=<dir> -DOUT=<file.cpp> -P
# Bundles the front end with esbuild and embeds it (embed_assets.cmake), or, when STATE says it
# cannot be bundled, embeds the "unavailable" stub that names the reason.
# STATE: "bundled\n<node>\n<esbuild hash>" or "unbundled\n<reason>".
file(READ "${STATE}" state)
string(FIND "${state}" "\n" nl)
string(SUBSTRING "${state}" 0 ${nl} mode)
math(EXPR rest "${nl} + 1")
string(SUBSTRING "${state}" ${rest} -1 what)
string(FIND "${what}" "\n" nl)
if(NOT nl EQUAL -1)
  string(SUBSTRING "${what}" 0 ${nl} what)
endif()
if(mode STREQUAL "bundled")
  execute_process(COMMAND "${what}" "${SOURCE}/build.mjs" "${DIST}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "bundling the viewer front end failed (node ${SOURCE}/build.mjs: ${rc})")
  endif()
  set(REASON "")
else()
  set(REASON "${what}")
  set(DIST "")
endif()
include("${SOURCE}/embed_assets.cmake")
