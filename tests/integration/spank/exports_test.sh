#!/usr/bin/env bash
# Slurm looks up plugin_name/type/version, spank_plugin_version and slurm_spank_*; everything
# else stays local (version script), so the plugin cannot clash with symbols of slurmstepd.
set -euo pipefail
so=$1
actual=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
expected=$(printf '%s\n' plugin_name plugin_type plugin_version spank_plugin_version slurm_spank_init \
  slurm_spank_init_post_opt slurm_spank_user_init slurm_spank_task_init_privileged \
  slurm_spank_task_init | sort)
if [[ "$actual" != "$expected" ]]; then
  echo "FAIL: $so exports"$'\n'"$actual"$'\n'"expected"$'\n'"$expected" >&2
  exit 1
fi
[[ "$(nm -D "$so" | awk '$3 == "plugin_type"' | wc -l)" == 1 ]]
echo "PASS: $so exports exactly: $(echo $actual)"
