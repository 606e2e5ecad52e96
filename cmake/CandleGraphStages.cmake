# One library target per stage of the pipeline (docs/architecture.md), each linking only the
# stages before it. The build enforces the data flow: every stage compiles against an include
# root of its own in the build tree that holds links to exactly its own folder, the public headers
# it owns and, through its links, those of the stages before it, so an #include that reaches a
# later stage fails to compile ("No such file or directory"), and so does one that reaches a
# public header of a later stage.
set(CG_STAGE_INCLUDE_ROOT ${PROJECT_BINARY_DIR}/stage-include)
set(CG_STAGE_TARGETS "" CACHE INTERNAL "")

# cg_stage(NAME [DIR dir] [INTERFACE] [RECURSE] [PUBLIC_HEADERS h...] [STAGES stage...]
#          [PUBLIC_PACKAGES target...] [PACKAGES target...] [SOURCES file...])
#   NAME             the stage; its target is cg_NAME (`import/pytorch` → cg_import_pytorch)
#   DIR              its folder under src/ (default NAME); headers are included as "DIR/x.hpp"
#   INTERFACE        a stage of headers only
#   PUBLIC_HEADERS   the headers of include/candle_graph/ this stage owns
#   STAGES           the earlier stages it builds on (their headers become visible)
#   PACKAGES         third-party targets it uses internally; PUBLIC_PACKAGES: in its headers
#   SOURCES          more sources (generated files); the folder's *.cpp are always included
# cg_include_root(ID DIR OUT_VAR [PUBLIC_HEADERS h...]): the include root of one stage (or of a
# program or test folder): a directory holding a link named DIR to src/DIR (or to DIR itself when
# it is absolute) and links to the given public headers under candle_graph/.
function(cg_include_root id dir out_var)
  cmake_parse_arguments(PARSE_ARGV 3 R "" "" "PUBLIC_HEADERS")
  set(root ${CG_STAGE_INCLUDE_ROOT}/${id})
  if(IS_ABSOLUTE ${dir})
    set(source ${dir})
    get_filename_component(dir ${dir} NAME)
  else()
    set(source ${PROJECT_SOURCE_DIR}/src/${dir})
  endif()
  get_filename_component(parent ${root}/${dir} DIRECTORY)
  file(MAKE_DIRECTORY ${parent} ${root}/candle_graph)
  if(NOT IS_SYMLINK ${root}/${dir})
    file(CREATE_LINK ${source} ${root}/${dir} SYMBOLIC)
  endif()
  foreach(header ${R_PUBLIC_HEADERS})
    set(public ${PROJECT_SOURCE_DIR}/include/candle_graph/${header})
    if(NOT EXISTS ${public})
      message(FATAL_ERROR "${id}: no public header include/candle_graph/${header}")
    endif()
    if(NOT IS_SYMLINK ${root}/candle_graph/${header})
      file(CREATE_LINK ${public} ${root}/candle_graph/${header} SYMBOLIC)
    endif()
  endforeach()
  set(${out_var} ${root} PARENT_SCOPE)
endfunction()

function(cg_stage name)
  cmake_parse_arguments(PARSE_ARGV 1 S "INTERFACE;RECURSE" "DIR"
                        "PUBLIC_HEADERS;STAGES;PACKAGES;PUBLIC_PACKAGES;SOURCES")
  if(NOT S_DIR)
    set(S_DIR ${name})
  endif()
  string(REPLACE "/" "_" id ${name})
  set(target cg_${id})
  cg_include_root(${id} ${S_DIR} root PUBLIC_HEADERS ${S_PUBLIC_HEADERS})
  set(stage_targets "")
  foreach(stage ${S_STAGES})
    string(REPLACE "/" "_" dep ${stage})
    if(NOT TARGET cg_${dep})
      message(FATAL_ERROR "stage ${name} builds on ${stage}, which is not defined before it")
    endif()
    list(APPEND stage_targets cg_${dep})
  endforeach()

  if(S_INTERFACE)
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE $<BUILD_INTERFACE:${root}>
                                                   $<INSTALL_INTERFACE:include>)
    target_link_libraries(${target} INTERFACE ${stage_targets} ${S_PUBLIC_PACKAGES})
  else()
    if(S_RECURSE)
      file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${S_DIR}/*.cpp)
    else()
      file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${S_DIR}/*.cpp)
    endif()
    add_library(${target} STATIC ${sources} ${S_SOURCES})
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${root}>
                                                $<INSTALL_INTERFACE:include>)
    target_link_libraries(${target} PUBLIC ${stage_targets} ${S_PUBLIC_PACKAGES}
                                    PRIVATE $<BUILD_INTERFACE:cg_warnings> ${S_PACKAGES})
    target_compile_definitions(${target} PRIVATE CG_VERSION="${PROJECT_VERSION}")
    set_target_properties(${target} PROPERTIES OUTPUT_NAME candle_graph_${id})
  endif()
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${id})
  add_library(candle_graph::${id} ALIAS ${target})
  set(CG_STAGE_TARGETS ${CG_STAGE_TARGETS} ${target} CACHE INTERNAL "")
endfunction()
