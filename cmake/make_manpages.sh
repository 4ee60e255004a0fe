#!/usr/bin/env bash
# Writes man pages for dtrain and each of its subcommands (dtrain.1.gz, dtrain-submit.1.gz, ...)
# from the built program's own --help, so the pages always match the options the program accepts.
#   make_manpages.sh DTRAIN OUTDIR
set -euo pipefail
dtrain=$1 out=$2
mkdir -p "$out"
version=$("$dtrain" --version | awk '{print $2}')

# roff escapes: backslashes, and a leading '.' or "'" that roff would take for a request.
escape() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

page() {  # name title help-text
  local name=$1 title=$2 help=$3 upper
  upper=$(tr '[:lower:]' '[:upper:]' <<<"$name")
  {
    printf '.TH %s 1 "" "dtrain %s" "User Commands"\n' "$upper" "$version"
    printf '.SH NAME\n%s \\- %s\n' "$name" "$(escape <<<"$title")"
    printf '.SH SYNOPSIS\n.nf\n%s\n.fi\n' "$(grep -m1 '^Usage:' <<<"$help" | sed "s|^Usage: [^ ]*dtrain|dtrain|" | escape)"
    printf '.SH DESCRIPTION\n.nf\n'
    sed '/^Usage:/d' <<<"$help" | escape
    printf '.fi\n.SH SEE ALSO\n'
    printf 'dtrain(1); the documentation in share/doc/dtrain and https://github.com/dtrain/dtrain/tree/main/docs\n'
  } >"$out/$name.1"
}

main_help=$("$dtrain" --help)
page dtrain "$(head -1 <<<"$main_help" | sed 's/^dtrain: //')" "$main_help"
# The subcommands are listed after "Subcommands:", one per line: NAME  DESCRIPTION.
sed -n '/^Subcommands:/,$p' <<<"$main_help" | tail -n +2 | while read -r cmd desc; do
  [[ -n $cmd ]] || continue
  page "dtrain-$cmd" "$desc" "$("$dtrain" "$cmd" --help)"
done
# Compressed the way Debian policy asks (-n: no name or time stamp, so builds are reproducible).
gzip -9nf "$out"/*.1
