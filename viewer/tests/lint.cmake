# cmake -DNODE=<node> -DVIEWER=<viewer/> -P lint.cmake
# `npm run lint` without npm: ESLint over viewer/ (eslint.config.js), then Prettier's check of its
# layout (.prettierrc.json). Both run, so one report names every finding; the test fails when
# either finds something. `npm run format` in viewer/ fixes the layout.
execute_process(COMMAND "${NODE}" node_modules/eslint/bin/eslint.js .
                WORKING_DIRECTORY "${VIEWER}" RESULT_VARIABLE eslint_rc)
execute_process(COMMAND "${NODE}" node_modules/prettier/bin/prettier.cjs --check .
                WORKING_DIRECTORY "${VIEWER}" RESULT_VARIABLE prettier_rc)
if(NOT eslint_rc EQUAL 0 OR NOT prettier_rc EQUAL 0)
  message(FATAL_ERROR "viewer lint failed: eslint exited ${eslint_rc}, prettier --check ${prettier_rc}")
endif()
