#!/usr/bin/env bash
# The modulefile as Environment Modules and Lmod read it (Tcl), evaluated by tclsh with the path
# commands simulated: `module load dtrain` must leave MANPATH with an empty element, so that
# `man ls` still searches the system's man pages. tests/integration/install runs the real `module`.
#   modulefile_test.sh MODULEFILE
set -euo pipefail
modulefile=$1
result() {  # MANPATH-BEFORE ("-" for unset): prints MANPATH after loading the modulefile
  tclsh <<TCL
if {{$1} ne "-"} { set ::env(MANPATH) {$1} } else { unset -nocomplain ::env(MANPATH) }
set ModulesCurrentModulefile {$modulefile}
proc module-whatis {args} {}
proc conflict {args} {}
proc path-op {where var value} {
  if {\$var ne "MANPATH"} return
  set parts [expr {[info exists ::env(MANPATH)] ? [split \$::env(MANPATH) :] : {}}]
  if {\$where eq "prepend"} { set parts [linsert \$parts 0 \$value] } else { lappend parts \$value }
  set ::env(MANPATH) [join \$parts :]
}
proc prepend-path {var value} { path-op prepend \$var \$value }
proc append-path {var value} { path-op append \$var \$value }
source {$modulefile}
puts \$::env(MANPATH)
TCL
}
prefix=$(cd "$(dirname "$modulefile")/../../.." && pwd)
status=0
got=$(result -)
if [[ $got != "$prefix/share/man:" ]]; then
  echo "MANPATH unset before: expected '$prefix/share/man:' (empty last element), got '$got'"
  status=1
fi
got=$(result /opt/man)
if [[ $got != "$prefix/share/man:/opt/man:" ]]; then
  echo "MANPATH=/opt/man before: expected '$prefix/share/man:/opt/man:', got '$got'"
  status=1
fi
exit $status
