// Every field of a job spec and what it accepts: the reader table, one row per field in
// documentation order (docs/spec.md), each with the reader that checks the field's value and
// stores it in a JobSpec. Kept apart from job_spec.cpp, which reads the document as a whole (the
// YAML, the command line's overrides, the required fields and the checks across fields), so that
// adding or changing a field is one row here and its reader, and nothing else.
#pragma once

#include <vector>

#include "plan/job_spec.hpp"
#include "plan/yaml_fields.hpp"

namespace dtrain::plan::detail {

// The table's names are job_spec_fields(); parse_job_spec reads a document's fields with it.
const std::vector<Field<JobSpec>>& spec_fields();

}  // namespace dtrain::plan::detail
