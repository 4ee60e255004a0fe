// libFuzzer target for the job spec parser: any input must give a JobSpec or a SpecError, never
// a crash, a hang, another exception or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plan/errors.hpp"
#include "plan/job_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto spec = dtrain::plan::parse_job_spec(text, "fuzz.yaml");
    // A spec that parsed must satisfy the validator's own promises.
    if (spec.name.empty() || spec.command.empty() || spec.nodes < 1) __builtin_trap();
  } catch (const dtrain::plan::SpecError& e) {
    if (e.issues().empty()) __builtin_trap();
  }
  return 0;
}
