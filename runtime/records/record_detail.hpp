// How much of each step a rank's metric file keeps (docs/metrics.md, "Detail"): the records
// library's names for the setting DTRAIN_RECORDS (a job spec's `records:`), which is defined once
// in common/run_settings.hpp, where the planner, which exports the spec's field, can use it too.
#pragma once

#include "common/run_settings.hpp"

namespace dtrain::records {

using dtrain::kDefaultRecordDetail;
using dtrain::kRecordDetailExpected;
using dtrain::kRecordsVariable;
using dtrain::parse_record_detail;
using dtrain::record_detail_name;
using dtrain::RecordDetail;

}  // namespace dtrain::records
