# libTxCompiler.so: the one library an embedder links. It bundles the object
# files of every tx library reachable from TxCAPI (so whatever pass or
# pipeline is registered through lib/Registration is in it), MLIR's C API
# (Debian ships no libMLIR-C.so), and links libMLIR.so like every tx tool.
#
# Built by a deferred call at the end of the top-level directory, when every
# tx library target exists whatever the order of add_subdirectory.

# Appends to the global properties TX_COMPILER_EMBED (tx libraries: their
# objects are embedded) and TX_COMPILER_DEPS (everything else they link).
function(_tx_collect_libraries lib)
  get_property(embedded GLOBAL PROPERTY TX_COMPILER_EMBED)
  if(lib IN_LIST embedded)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY TX_COMPILER_EMBED ${lib})
  get_target_property(deps ${lib} LINK_LIBRARIES)
  if(NOT deps)
    return()
  endif()
  foreach(dep IN LISTS deps)
    set(is_tx_library OFF)
    if(TARGET ${dep} AND TARGET obj.${dep})
      get_target_property(dir ${dep} SOURCE_DIR)
      string(FIND "${dir}" "${PROJECT_SOURCE_DIR}/lib" pos)
      if(pos EQUAL 0)
        set(is_tx_library ON)
      endif()
    endif()
    if(is_tx_library)
      _tx_collect_libraries(${dep})
    else()
      set_property(GLOBAL APPEND PROPERTY TX_COMPILER_DEPS ${dep})
    endif()
  endforeach()
endfunction()

function(tx_add_compiler_library)
  _tx_collect_libraries(TxCAPI)
  get_property(embedded GLOBAL PROPERTY TX_COMPILER_EMBED)
  get_property(deps GLOBAL PROPERTY TX_COMPILER_DEPS)
  list(REMOVE_DUPLICATES deps)
  list(REMOVE_ITEM deps MLIR)
  set(objects)
  foreach(lib IN LISTS embedded)
    list(APPEND objects $<TARGET_OBJECTS:obj.${lib}>)
  endforeach()
  message(STATUS "libTxCompiler.so embeds: ${embedded}")

  # MLIR's own C API (mlirContextCreate, ...) in a library of its own: the
  # Debian archive is built by clang with hidden template statics, and
  # linked into the same object as tx's GCC-built code those hidden copies
  # would replace the exported TypeIDs that tx must share with libMLIR.so.
  add_library(TxMLIRCAPI SHARED ${PROJECT_SOURCE_DIR}/lib/CAPI/MLIRCAPI/MLIRCAPI.cpp)
  target_link_libraries(TxMLIRCAPI PRIVATE
    "$<LINK_LIBRARY:WHOLE_ARCHIVE,$<TARGET_FILE:MLIRCAPIIR>>" MLIR LLVM)
  target_link_options(TxMLIRCAPI PRIVATE "LINKER:-z,defs")
  set_target_properties(TxMLIRCAPI PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
    BUILD_WITH_INSTALL_RPATH ON
    INSTALL_RPATH "${LLVM_LIBRARY_DIR}"
    LINKER_LANGUAGE CXX
  )

  add_library(TxCompiler SHARED ${objects})
  target_link_libraries(TxCompiler
    PRIVATE
    ${deps}
    # Users of the C++ API call into both libMLIR.so and libLLVM.so.
    PUBLIC
    TxMLIRCAPI
    MLIR
    LLVM
  )
  target_include_directories(TxCompiler INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>
  )
  # Undefined symbols are link errors here, not load errors in a user's
  # process.
  target_link_options(TxCompiler PRIVATE "LINKER:-z,defs")
  set_target_properties(TxCompiler PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
    BUILD_WITH_INSTALL_RPATH ON
    INSTALL_RPATH "\$ORIGIN:${LLVM_LIBRARY_DIR}"
    LINKER_LANGUAGE CXX
  )
endfunction()

cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL tx_add_compiler_library)
