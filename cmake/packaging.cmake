# Installing dtrain like an HPC tool: a CMake package (find_package(dtrain CONFIG) → dtrain::runtime),
# dtrain.pc, man pages generated from the program's --help, bash completion, an Environment
# Modules/Lmod modulefile, the plugstack.conf snippet of the SPANK plugin, and a Debian package
# (cpack -G DEB) whose Depends come from dpkg-shlibdeps.
include(CMakePackageConfigHelpers)

set(DTRAIN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/dtrain)
set(DTRAIN_INSTALL_TEMPLATES_DIR ${CMAKE_INSTALL_DATADIR}/dtrain/templates)

# The exported name matches the in-tree alias, so consumers write dtrain::runtime either way.
set_target_properties(dtrain_runtime PROPERTIES EXPORT_NAME runtime)
install(EXPORT dtrainTargets NAMESPACE dtrain:: DESTINATION ${DTRAIN_INSTALL_CMAKEDIR}
        COMPONENT devel)
configure_package_config_file(cmake/dtrainConfig.cmake.in
  ${PROJECT_BINARY_DIR}/packaging/dtrainConfig.cmake
  INSTALL_DESTINATION ${DTRAIN_INSTALL_CMAKEDIR}
  PATH_VARS DTRAIN_INSTALL_TEMPLATES_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/packaging/dtrainConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/packaging/dtrainConfig.cmake
              ${PROJECT_BINARY_DIR}/packaging/dtrainConfigVersion.cmake
        DESTINATION ${DTRAIN_INSTALL_CMAKEDIR} COMPONENT devel)

file(RELATIVE_PATH DTRAIN_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
file(RELATIVE_PATH DTRAIN_MODULE_TO_PREFIX /p/${CMAKE_INSTALL_DATADIR}/modulefiles/dtrain /p)
configure_file(cmake/dtrain.pc.in ${PROJECT_BINARY_DIR}/packaging/dtrain.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/dtrain.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT devel)

configure_file(packaging/module/dtrain.modulefile.in
               ${PROJECT_BINARY_DIR}/packaging/modulefiles/dtrain/${PROJECT_VERSION} @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/modulefiles/dtrain/${PROJECT_VERSION}
        DESTINATION ${CMAKE_INSTALL_DATADIR}/modulefiles/dtrain COMPONENT runtime)

if(TARGET dtrain_spank)
  # The plugin's absolute path is known only at install time (cpack installs under /usr).
  install(CODE "
    set(dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/dtrain/plugstack.conf.d\")
    file(READ \"${PROJECT_SOURCE_DIR}/packaging/plugstack-dtrain.conf.in\" text)
    string(REPLACE \"@DTRAIN_SPANK_PATH@\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/slurm/dtrain_spank.so\" text \"\${text}\")
    file(MAKE_DIRECTORY \"\${dir}\")
    file(WRITE \"\${dir}/dtrain.conf\" \"\${text}\")
    message(STATUS \"Installing: \${dir}/dtrain.conf\")" COMPONENT runtime)
endif()

install(FILES packaging/bash-completion/dtrain
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT runtime)

set(DTRAIN_MAN_DIR ${PROJECT_BINARY_DIR}/man/man1)
add_custom_command(OUTPUT ${DTRAIN_MAN_DIR}/dtrain.1 ${DTRAIN_MAN_DIR}/dtrain-submit.1
  COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/make_manpages.sh $<TARGET_FILE:dtrain> ${DTRAIN_MAN_DIR}
  DEPENDS dtrain ${PROJECT_SOURCE_DIR}/cmake/make_manpages.sh
  COMMENT "Man pages from dtrain --help")
add_custom_target(dtrain_manpages ALL DEPENDS ${DTRAIN_MAN_DIR}/dtrain.1)
install(DIRECTORY ${DTRAIN_MAN_DIR} DESTINATION ${CMAKE_INSTALL_MANDIR} COMPONENT runtime)

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)

set(CPACK_PACKAGE_NAME dtrain)
set(CPACK_PACKAGE_VENDOR "dtrain developers")
set(CPACK_PACKAGE_CONTACT "dtrain developers <dtrain@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Data-parallel training jobs on Slurm and PBS clusters: CLI, libdtrain, SPANK plugin")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE https://github.com/dtrain/dtrain)
# Library dependencies (libpmix2, libopenmpi3, libhwloc15, libyaml-cpp0.7, libstdc++6 ...) are
# read off the binaries by dpkg-shlibdeps; programs the job scripts run are named here.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin, hwloc")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "slurm-client")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "environment-modules | lmod")
include(CPack)
