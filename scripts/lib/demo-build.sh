# How scripts/demo builds dtrain, in one place: tests/check_unity_build.sh configures the same tree
# to check that each unity batch compiles, so that the demo's fast build cannot silently fall back
# to the slow one (docs/install.md, "Build time").
#   DEMO_CMAKE_OPTIONS   the configure options (the demo adds -DCMAKE_UNITY_BUILD=ON or OFF)
#   DEMO_TARGETS         what it builds: the CLI (with libdtrain) and the Fashion-MNIST example
DEMO_CMAKE_OPTIONS=(-DCMAKE_BUILD_TYPE=Release -DDTRAIN_BUILD_TESTS=OFF -DDTRAIN_BUILD_BENCH=OFF
  -DDTRAIN_BUILD_PYTHON=OFF -DDTRAIN_BUILD_SPANK=OFF)
DEMO_TARGETS=(dtrain dtrain-fashion-mnist)
