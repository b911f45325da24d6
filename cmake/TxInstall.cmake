# cmake --install: headers (sources and generated .inc), libTxCompiler.so,
# libTxMLIRCAPI.so, libTxPlugin.so, tx-opt, the Python package and
# lib/cmake/TxDialect (TxDialectConfig.cmake + TxDialect::TxCompiler).
# Deferred with the library itself: it installs targets made elsewhere.
# All in component TxDialect: `cmake --install <build> --component TxDialect`
# needs only the embedding targets built (a plain install needs `all`).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

function(tx_add_install_rules)
  set(TX_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/TxDialect)
  set(TX_INSTALL_PYTHONDIR python_packages)

  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/TxDialect
                    ${PROJECT_SOURCE_DIR}/include/TxDialect-c
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT TxDialect
    FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
  install(DIRECTORY ${PROJECT_BINARY_DIR}/include/TxDialect
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT TxDialect
    FILES_MATCHING PATTERN "*.inc"
    PATTERN "CMakeFiles" EXCLUDE)

  install(TARGETS TxCompiler TxMLIRCAPI
    EXPORT TxDialectTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT TxDialect
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(TARGETS TxPlugin
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT TxDialect)
  install(TARGETS tx-opt
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT TxDialect)
  # tx-opt and the plugin find libMLIR.so where it was when they were built.
  set_target_properties(tx-opt PROPERTIES INSTALL_RPATH "${LLVM_LIBRARY_DIR}")

  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/tx
    DESTINATION ${TX_INSTALL_PYTHONDIR}
    COMPONENT TxDialect
    FILES_MATCHING PATTERN "*.py")

  install(EXPORT TxDialectTargets
    NAMESPACE TxDialect::
    DESTINATION ${TX_INSTALL_CMAKEDIR}
    COMPONENT TxDialect)
  configure_package_config_file(
    ${PROJECT_SOURCE_DIR}/cmake/TxDialectConfig.cmake.in
    ${PROJECT_BINARY_DIR}/cmake/TxDialectConfig.cmake
    INSTALL_DESTINATION ${TX_INSTALL_CMAKEDIR}
    PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR
              CMAKE_INSTALL_LIBDIR TX_INSTALL_PYTHONDIR)
  write_basic_package_version_file(
    ${PROJECT_BINARY_DIR}/cmake/TxDialectConfigVersion.cmake
    VERSION 0.1.0
    COMPATIBILITY SameMinorVersion)
  install(FILES
    ${PROJECT_BINARY_DIR}/cmake/TxDialectConfig.cmake
    ${PROJECT_BINARY_DIR}/cmake/TxDialectConfigVersion.cmake
    DESTINATION ${TX_INSTALL_CMAKEDIR}
    COMPONENT TxDialect)
endfunction()

cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL tx_add_install_rules)
