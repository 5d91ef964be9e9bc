# Decides whether the CUDA parts are built. AUTO builds them when the toolkit is found,
# ON insists on it, OFF never looks. The result is FUSESCOPE_HAVE_CUDA.
set(FUSESCOPE_HAVE_CUDA OFF)
if(NOT FUSESCOPE_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  # Debian 12's CMake 3.25 FindCUDAToolkit marks CUDA::nvToolsExt deprecated without checking
  # the target exists; CUDA 13 ships no libnvToolsExt (NVTX 3 is headers only), so a stock
  # machine fails to configure. An empty stand-in target lets it through; nothing links it.
  if(NOT TARGET CUDA::nvToolsExt)
    add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(FUSESCOPE_HAVE_CUDA ON)
    # nvcc builds the device kernels for Ampere (A100) and Hopper (H100/H200).
    if(NOT CMAKE_CUDA_COMPILER)
      set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
    endif()
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    message(STATUS "Fusescope: CUDA toolkit ${CUDAToolkit_VERSION} found at ${CUDAToolkit_BIN_DIR}; CUDA parts are built")
  elseif(FUSESCOPE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "FUSESCOPE_CUDA=ON but no CUDA toolkit was found (set CUDAToolkit_ROOT)")
  else()
    message(STATUS "Fusescope: no CUDA toolkit found; building the CPU-only engine")
  endif()
else()
  message(STATUS "Fusescope: FUSESCOPE_CUDA=OFF; building the CPU-only engine")
endif()
