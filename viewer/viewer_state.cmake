# cmake -DNODE=<node or empty> -DSOURCE=<viewer/> -DSTATE=<file> -P viewer_state.cmake
# Runs on every build (and once at configure time): writes whether the front end can be bundled
# now (node found, `npm ci` done) to STATE, touching the file only when that changed. The asset
# generation depends on STATE, so `npm ci` after configuring (or removing node_modules) is picked
# up by the next build without re-running CMake.
if(NOT NODE)
  find_program(found_node node NO_CACHE)
  if(found_node)
    set(NODE "${found_node}")
  endif()
endif()
if(NOT NODE)
  set(state "unbundled\nnode was not found when candle-graph was built; install nodejs and npm, run npm ci in viewer/ (./run does both) and rebuild")
elseif(NOT EXISTS "${SOURCE}/node_modules/esbuild/package.json")
  set(state "unbundled\nviewer/node_modules is missing; run npm ci in viewer/ (./run does it) and rebuild")
else()
  # The installed esbuild's package.json changes with every `npm ci` of another version.
  file(SHA256 "${SOURCE}/node_modules/esbuild/package.json" esbuild)
  set(state "bundled\n${NODE}\n${esbuild}")
endif()
set(old "")
if(EXISTS "${STATE}")
  file(READ "${STATE}" old)
endif()
if(NOT old STREQUAL state)
  file(WRITE "${STATE}" "${state}")
endif()
