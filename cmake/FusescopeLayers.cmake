# The libraries' layers (docs/architecture.md, "Layers and libraries"): each of our libraries
# may link only the ones listed for it, those of the layers below its own. A link against a
# library above, or between the two backends, stops the configure naming the pair, so a
# layering mistake fails the build. tests/check_layers.py holds the same rules for #includes.
set(FSC_LAYER_LINKS_fsc_core "")
set(FSC_LAYER_LINKS_fsc_runtime fsc_core)
set(FSC_LAYER_LINKS_fsc_backend_cpu fsc_core fsc_runtime)
set(FSC_LAYER_LINKS_fsc_backend_cuda fsc_core fsc_runtime fsc_cuda_query)  # its own device query, apart for its headers
set(FSC_LAYER_LINKS_fsc_compiler fsc_core fsc_runtime fsc_backend_cpu fsc_backend_cuda)
set(FSC_LAYER_LINKS_fsc_profiler fsc_core)
set(FSC_LAYER_LINKS_fsc_view_maths fsc_core fsc_profiler)
set(FSC_LAYER_LINKS_fsc_views fsc_core fsc_runtime fsc_compiler fsc_profiler fsc_view_maths)
set(FSC_ENGINE_LIBS fsc_core fsc_runtime fsc_backend_cpu fsc_backend_cuda fsc_compiler fsc_profiler fsc_view_maths)
set(FSC_LAYER_LINKS_fsc_profiling ${FSC_ENGINE_LIBS})
set(FSC_LAYER_LINKS_fsc_app_common ${FSC_ENGINE_LIBS} fsc_profiling)
set(FSC_LAYER_LINKS_fsc_analysis ${FSC_ENGINE_LIBS} fsc_profiling fsc_app_common)
set(FSC_LAYER_LINKS_fsc_reports ${FSC_ENGINE_LIBS} fsc_profiling)
set(FSC_LAYER_LINKS_fsc_walkthrough ${FSC_ENGINE_LIBS} fsc_profiling fsc_app_common fsc_analysis fsc_reports)
set(FSC_LAYER_LINKS_fsc_gui ${FSC_ENGINE_LIBS} fsc_profiling fsc_app_common fsc_analysis fsc_reports fsc_walkthrough fsc_views)

function(fsc_check_library_layers)
  foreach(lib fsc_core fsc_runtime fsc_backend_cpu fsc_backend_cuda fsc_compiler fsc_profiler fsc_view_maths
              fsc_views fsc_profiling fsc_app_common fsc_analysis fsc_reports fsc_walkthrough fsc_gui)
    if(NOT TARGET ${lib})
      continue()
    endif()
    get_target_property(links ${lib} LINK_LIBRARIES)
    if(NOT links)
      continue()
    endif()
    foreach(link IN LISTS links)
      if(link MATCHES "^fsc_" AND NOT link IN_LIST FSC_LAYER_LINKS_${lib})
        message(FATAL_ERROR "${lib} links ${link}, which is not below it (cmake/FusescopeLayers.cmake; "
                            "docs/architecture.md, Layers and libraries)")
      endif()
    endforeach()
  endforeach()
endfunction()

# Runs once every directory is read, whichever way the top-level list ends.
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL fsc_check_library_layers)
