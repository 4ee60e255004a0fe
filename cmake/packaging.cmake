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
# Gzipped (gzip -9n, as Debian policy wants them; man reads them the same).
add_custom_command(OUTPUT ${DTRAIN_MAN_DIR}/dtrain.1.gz ${DTRAIN_MAN_DIR}/dtrain-submit.1.gz
  COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/make_manpages.sh $<TARGET_FILE:dtrain> ${DTRAIN_MAN_DIR}
  DEPENDS dtrain ${PROJECT_SOURCE_DIR}/cmake/make_manpages.sh
  COMMENT "Man pages from dtrain --help")
add_custom_target(dtrain_manpages ALL DEPENDS ${DTRAIN_MAN_DIR}/dtrain.1.gz)
install(DIRECTORY ${DTRAIN_MAN_DIR} DESTINATION ${CMAKE_INSTALL_MANDIR} COMPONENT runtime)

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
# The licence (LICENSE, BSD-3-Clause) in Debian's machine-readable form, and a changelog, which
# Debian policy requires of every package (a native one: changelog.gz).
install(FILES packaging/deb/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
configure_file(packaging/deb/changelog.in ${PROJECT_BINARY_DIR}/packaging/changelog @ONLY)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/packaging/changelog.gz
  COMMAND gzip -9nkf ${PROJECT_BINARY_DIR}/packaging/changelog
  DEPENDS ${PROJECT_BINARY_DIR}/packaging/changelog)
add_custom_target(dtrain_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/packaging/changelog.gz)
install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR}
        COMPONENT runtime)

set(CPACK_PACKAGE_NAME dtrain)
set(CPACK_PACKAGE_VENDOR "dtrain developers")
set(CPACK_PACKAGE_CONTACT "dtrain developers <dtrain@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Data-parallel training on Slurm and PBS clusters: CLI, library, SPANK plugin")
# The extended description (lintian: a package needs one); CPack puts the summary above it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "dtrain runs data-parallel deep-learning training from one GPU to many nodes.
The dtrain command plans a job from a YAML spec and submits it to Slurm, PBS,
PBS Pro, Cobalt, Kubernetes (MPI operator) or the local machine, then reads
its logs, metrics and timelines. libdtrain gives each rank its place in the
job (PMIx, MPI or launcher variables), collectives and checkpoints, from C++
or C. The Slurm SPANK plugin binds every task to its GPU, cores and NIC.
The NCCL backend loads NCCL and the CUDA runtime when first used; they
are not dependencies of the package.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Debian policy: stripped binaries, a shlibs file for libdtrain.so.0 (CPack then also declares an
# ldconfig trigger instead of maintainer scripts that run ldconfig).
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# Debian policy: ldconfig runs through dpkg's trigger. CPack 3.25 also writes postinst/postrm scripts that run
# it; packaging/deb/build-deb.sh removes those from the package.
configure_file(packaging/deb/triggers ${PROJECT_BINARY_DIR}/packaging/deb/triggers COPYONLY)
set(CPACK_DEBIAN_DTRAIN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/packaging/deb/triggers)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE https://github.com/dtrain/dtrain)
# Library dependencies (libpmix2, libopenmpi3, libhwloc15, libyaml-cpp0.7, libstdc++6 ...) are
# read off the binaries by dpkg-shlibdeps; programs the job scripts run are named here.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin, hwloc")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "slurm-client")
if(DTRAIN_DEB_PYTHON_DEPENDS)  # the Python module (python/) is in the package
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", ${DTRAIN_DEB_PYTHON_DEPENDS}")
  # Recommended, not required: the module imports without NumPy and takes any buffer-protocol or
  # DLPack object (bytearray, memoryview, torch tensors); NumPy arrays are what most codes pass.
  string(APPEND CPACK_DEBIAN_PACKAGE_RECOMMENDS ", python3-numpy")
endif()
# NCCL (NVIDIA's repository; libdtrain loads it with dlopen, so dpkg-shlibdeps does not see it).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "environment-modules | lmod, libnccl2")

# Two packages: dtrain (the CLI, libdtrain, its headers, the plugin, the Python module) and, where
# the torch backend is built, python3-dtrain-torch (dtrain.torch alone), so that installing dtrain
# on a login node or a site without PyTorch does not pull in libtorch (about 1 GB with its
# dependencies); the backend's package depends on this very dtrain, and dpkg-shlibdeps gives its
# libtorch dependencies.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_COMPONENTS_ALL runtime devel python)
set(CPACK_DEBIAN_DTRAIN_PACKAGE_NAME dtrain)
if(DTRAIN_HAVE_TORCH)
  list(APPEND CPACK_COMPONENTS_ALL torch torch_deb_docs)
  set(CPACK_DEBIAN_TORCH_PACKAGE_NAME python3-dtrain-torch)
  set(CPACK_DEBIAN_TORCH_PACKAGE_SECTION python)
  set(CPACK_DEBIAN_TORCH_PACKAGE_DEPENDS
      "dtrain (= ${PROJECT_VERSION}), ${DTRAIN_DEB_PYTHON_DEPENDS}, ${DTRAIN_DEB_TORCH_DEPENDS}")
  # dpkg-shlibdeps reads the module's libtorch dependencies; libdtrain.so.0, which it also needs,
  # is in the dtrain package, not installed while this one is made: found in the build tree (-l;
  # CPack passes --ignore-missing-info) and depended on above by exact version.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/lib)  # runtime/CMakeLists.txt
  set(CPACK_DEBIAN_TORCH_PACKAGE_RECOMMENDS "")
  set(CPACK_DEBIAN_TORCH_PACKAGE_SUGGESTS "")
  set(CPACK_DEBIAN_TORCH_DESCRIPTION
      "torch.distributed backend \"dtrain\" over libdtrain
dtrain.torch registers the backend \"dtrain\" with PyTorch's torch.distributed:
init_process_group(backend=\"dtrain\") runs DDP, pipeline and expert-parallel
programs on libdtrain's collectives and point-to-point messages, with the
same records, hang watch and straggler reports as dtrain's own programs.")
  # Debian policy: every package has its copyright file and changelog under its own doc directory.
  # A component of their own (in the package's group): pip installs component torch into a wheel,
  # which has no use for them (and builds no changelog).
  install(FILES packaging/deb/copyright ${PROJECT_BINARY_DIR}/packaging/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/python3-dtrain-torch COMPONENT torch_deb_docs)
endif()
include(CPack)
cpack_add_component_group(dtrain)
foreach(component runtime devel python)
  cpack_add_component(${component} GROUP dtrain)
endforeach()
if(DTRAIN_HAVE_TORCH)
  cpack_add_component_group(torch)
  cpack_add_component(torch GROUP torch)
  cpack_add_component(torch_deb_docs GROUP torch)
endif()
