#include "comm/body_gate.hpp"

namespace dtrain::runtime {

bool BodyGate::enter() {
  std::lock_guard lock(mutex_);
  if (closed_) return false;
  in_body_ = true;
  return true;
}

bool BodyGate::leave() {
  std::lock_guard lock(mutex_);
  in_body_ = false;
  return !orphaned_;
}

bool BodyGate::orphan_if_inside() {
  std::lock_guard lock(mutex_);
  orphaned_ = in_body_;
  closed_ = !in_body_;
  return orphaned_;
}

}  // namespace dtrain::runtime
