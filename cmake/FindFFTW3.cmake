# Finds FFTW3 in double and single precision with its OpenMP threading library.
# Defines the imported targets FFTW3::fftw3 and FFTW3::fftw3f (each carrying its _omp library).
include(FindPackageHandleStandardArgs)
find_path(FFTW3_INCLUDE_DIR fftw3.h)
foreach(prec IN ITEMS "" "f")
  find_library(FFTW3${prec}_LIBRARY fftw3${prec})
  find_library(FFTW3${prec}_OMP_LIBRARY fftw3${prec}_omp)
endforeach()
find_package_handle_standard_args(FFTW3 REQUIRED_VARS FFTW3_INCLUDE_DIR FFTW3_LIBRARY
  FFTW3_OMP_LIBRARY FFTW3f_LIBRARY FFTW3f_OMP_LIBRARY)
if(FFTW3_FOUND)
  foreach(prec IN ITEMS "" "f")
    if(NOT TARGET FFTW3::fftw3${prec})
      add_library(FFTW3::fftw3${prec} INTERFACE IMPORTED)
      set_target_properties(FFTW3::fftw3${prec} PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${FFTW3_INCLUDE_DIR}"
        INTERFACE_LINK_LIBRARIES "${FFTW3${prec}_OMP_LIBRARY};${FFTW3${prec}_LIBRARY}")
    endif()
  endforeach()
endif()
mark_as_advanced(FFTW3_INCLUDE_DIR FFTW3_LIBRARY FFTW3_OMP_LIBRARY FFTW3f_LIBRARY FFTW3f_OMP_LIBRARY)
