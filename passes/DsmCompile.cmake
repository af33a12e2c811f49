# dsm_add_executable(<name> <source>...): like add_executable, but every source goes
# through dsm-pass first (what dsmc++ does for command-line users), and the target links
# libdsm. Sources may live in any folder; rewritten files go to the binary directory and
# keep #line directives pointing at the originals. Works in this project's tree and, after
# find_package(dsm), in any other (the targets are then dsm::dsm and dsm::dsm-pass).
function(dsm_add_executable name)
  if(NOT ARGN)
    message(FATAL_ERROR "dsm_add_executable(${name}): no sources")
  endif()
  if(TARGET dsm::dsm)
    set(lib dsm::dsm)
    set(pass dsm::dsm-pass)
  else()
    set(lib dsm)
    set(pass dsm-pass)
  endif()
  # The pass parses with the language standard the target is compiled with (C++20 at least:
  # the DSM headers need it).
  set(std ${CMAKE_CXX_STANDARD})
  if(NOT std OR std LESS 20)
    set(std 20)
  endif()
  set(incs "$<TARGET_PROPERTY:${name},INCLUDE_DIRECTORIES>")
  set(defs "$<TARGET_PROPERTY:${name},COMPILE_DEFINITIONS>")
  set(dsm_incs "$<TARGET_PROPERTY:${lib},INTERFACE_INCLUDE_DIRECTORIES>")
  set(generated)
  set(quote_dirs)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/dsm_pass/${name})  # Ninja makes it, make does not
  foreach(src ${ARGN})
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(fname ${abs} NAME)
    get_filename_component(dir ${abs} DIRECTORY)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/dsm_pass/${name}/${fname})
    add_custom_command(OUTPUT ${out}
      COMMAND ${pass} ${abs} -o ${out} -- -std=c++${std}
              "-I$<JOIN:${dsm_incs},;-I>"
              "$<$<BOOL:${incs}>:-I$<JOIN:${incs},;-I>>"
              "$<$<BOOL:${defs}>:-D$<JOIN:${defs},;-D>>"
      DEPENDS ${abs} ${pass}
      COMMENT "dsm-pass ${src}"
      COMMAND_EXPAND_LISTS VERBATIM)
    list(APPEND generated ${out})
    list(APPEND quote_dirs ${dir})
  endforeach()
  list(REMOVE_DUPLICATES quote_dirs)
  add_executable(${name} ${generated})
  target_link_libraries(${name} PRIVATE ${lib})
  target_compile_features(${name} PRIVATE cxx_std_${std})
  foreach(dir ${quote_dirs})
    target_compile_options(${name} PRIVATE "SHELL:-iquote ${dir}")
  endforeach()
endfunction()
