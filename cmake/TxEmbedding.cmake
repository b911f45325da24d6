# Everything that makes tx usable from outside this build tree.
include(${CMAKE_CURRENT_LIST_DIR}/TxCompiler.cmake)
add_subdirectory(${PROJECT_SOURCE_DIR}/python ${PROJECT_BINARY_DIR}/python)
include(${CMAKE_CURRENT_LIST_DIR}/TxInstall.cmake)
find_package(Python3 COMPONENTS Interpreter)
add_subdirectory(${PROJECT_SOURCE_DIR}/docs ${PROJECT_BINARY_DIR}/docs-gen)
