# The label selection of scripts/test, apart so that tests/unit/scripts checks it: the default
# run leaves out the benchmarks (label bench: minutes of timings to read, never pass/fail);
# --quick also leaves out the multinode cluster and the install and package tests (the development
# loop, about 10 minutes); -L/--label-regex selects exactly what is asked for (the benchmarks
# too, when named); -LE/--label-exclude adds to what is left out (ctest takes one -LE, so the
# excluded labels become one regex). Every other argument goes to ctest as it is.
#   ctest_arguments ARGS...   sets the array CTEST_ARGS; returns 2, with a message, on a bad one.
ctest_arguments() {
  local exclude=(bench) selected=0
  CTEST_ARGS=()
  while (($#)); do
    case $1 in
      --quick) exclude+=(multinode install) ;;
      -LE | --label-exclude)
        (($# >= 2)) || {
          echo "scripts/test: $1 needs a label regex" >&2
          return 2
        }
        exclude+=("$2")
        shift
        ;;
      -LE*) exclude+=("${1#-LE}") ;;
      --label-exclude=*) exclude+=("${1#*=}") ;;
      -L | --label-regex)
        (($# >= 2)) || {
          echo "scripts/test: $1 needs a label regex" >&2
          return 2
        }
        selected=1
        CTEST_ARGS+=("$1" "$2")
        shift
        ;;
      -L* | --label-regex=*)
        selected=1
        CTEST_ARGS+=("$1")
        ;;
      *) CTEST_ARGS+=("$1") ;;
    esac
    shift
  done
  # A selection names what it wants: the benchmarks are left out only by default.
  ((selected)) && exclude=("${exclude[@]:1}")
  if ((${#exclude[@]})); then
    local IFS='|'
    CTEST_ARGS=(-LE "${exclude[*]}" "${CTEST_ARGS[@]}")
  fi
  return 0
}
