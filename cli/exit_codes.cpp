#include "exit_codes.hpp"

#include <cstdio>
#include <dtrain/dtrain.hpp>
#include <exception>
#include <new>
#include <string>

#include "common/errors.hpp"
#include "plan/errors.hpp"

namespace dtrain::cli {
namespace {

int report(const std::string& message, int code) {
  std::string text = message;
  // Spec errors are "file:line: field: ..." lines; everything else carries its own "dtrain:".
  if (text.rfind("dtrain:", 0) != 0) text = "dtrain: error: " + text;
  std::fprintf(stderr, "%s\n", text.c_str());
  return code;
}

}  // namespace

int run_guarded(const Action& action) {
  if (!action) return kExitUsage;
  try {
    return action();
  } catch (const plan::SpecError& e) {
    for (const auto& issue : e.issues())
      std::fprintf(stderr, "%s\n", plan::format_issue(issue).c_str());
    std::fprintf(stderr, "dtrain: %zu error%s in the job spec\n", e.issues().size(),
                 e.issues().size() == 1 ? "" : "s");
    return kExitUsage;
  } catch (const InputError& e) {
    return report(e.what(), kExitUsage);
  } catch (const Error& e) {
    // libdtrain's error (dtrain doctor): kInvalid is a bad argument or setting.
    return report(e.what(), e.code() == Error::Code::kInvalid ? kExitUsage : kExitFailure);
  } catch (const Failure& e) {
    return report(e.what(), kExitFailure);
  } catch (const std::bad_alloc&) {
    return report("dtrain: out of memory", kExitFailure);
  } catch (const std::logic_error& e) {
    return report(std::string("dtrain: internal error (please report): ") + e.what(),
                  kExitSoftware);
  } catch (const std::exception& e) {
    // Whatever else the program or the standard library throws (a system_error): a failure.
    return report(e.what(), kExitFailure);
  }
}

}  // namespace dtrain::cli
