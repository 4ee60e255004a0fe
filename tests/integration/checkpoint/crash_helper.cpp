// A process whose save can be stopped at an exact point, for the kill-at-every-stage test.
//
//   crash_helper save DIR STEP   saves step STEP's state; with DTRAIN_TEST_STOP_AT=STAGE[:N] it
//                                raises SIGSTOP when the save reaches STAGE (for "writing", after
//                                the N-th piece), so that the test can SIGKILL it right there
//   crash_helper load DIR        loads the newest checkpoint, checks its bytes against the state
//                                of its step, prints "step S" or "none"; exit 1 on a mismatch
//
// The state of step s is a function of s alone (state_of), written in kPieces pieces, so that a
// loaded checkpoint can be checked byte for byte and a kill mid-write can land between any two.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dtrain/dtrain.hpp>
#include <string>
#include <vector>

namespace {

constexpr int kPieces = 16;

std::vector<std::byte> state_of(std::int64_t step) {
  std::vector<std::byte> out(1000 + static_cast<std::size_t>((step * 7919) % 50000));
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::byte>((step * 31 + static_cast<std::int64_t>(i) * 7) & 0xff);
  }
  return out;
}

std::string blob_of(std::int64_t step) { return "rank0-step" + std::to_string(step); }

const char* stage_name(dtrain::SaveStage s) {
  switch (s) {
    case dtrain::SaveStage::kBeforeWrite:
      return "before-write";
    case dtrain::SaveStage::kWriting:
      return "writing";
    case dtrain::SaveStage::kWritten:
      return "written";
    case dtrain::SaveStage::kRenamed:
      return "renamed";
    case dtrain::SaveStage::kDirSynced:
      return "dir-synced";
    case dtrain::SaveStage::kPointerWritten:
      return "pointer-written";
    case dtrain::SaveStage::kPointerUpdated:
      return "pointer-updated";
    case dtrain::SaveStage::kPruned:
      return "pruned";
  }
  return "?";
}

int save(dtrain::Context& ctx, const std::string& dir, std::int64_t step) {
  std::string stop_stage;
  int stop_piece = 0;
  if (const char* env = std::getenv("DTRAIN_TEST_STOP_AT")) {
    stop_stage = env;
    if (auto colon = stop_stage.find(':'); colon != std::string::npos) {
      stop_piece = std::atoi(stop_stage.c_str() + colon + 1);
      stop_stage.resize(colon);
    }
  }
  int pieces_seen = 0;
  dtrain::CheckpointOptions opts;
  opts.keep = 2;
  opts.on_stage = [&](dtrain::SaveStage s, std::uint64_t) {
    if (s == dtrain::SaveStage::kWriting) ++pieces_seen;
    if (stop_stage == stage_name(s) &&
        (s != dtrain::SaveStage::kWriting || pieces_seen == stop_piece)) {
      raise(SIGSTOP);  // the test SIGKILLs us here
    }
  };
  dtrain::Checkpointer ckpt(ctx, dir, opts);
  const auto state = state_of(step);
  const std::string blob = blob_of(step);
  ckpt.save(
      step,
      [&](dtrain::CheckpointWriter& w) {
        const std::size_t piece = (state.size() + kPieces - 1) / kPieces;
        for (std::size_t at = 0; at < state.size(); at += piece) {
          w.write(std::span(state).subspan(at, std::min(piece, state.size() - at)));
        }
      },
      std::as_bytes(std::span(blob)));
  std::printf("saved %lld\n", static_cast<long long>(step));
  return 0;
}

int load(dtrain::Context& ctx, const std::string& dir) {
  dtrain::Checkpointer ckpt(ctx, dir);
  auto c = ckpt.load_latest();
  if (!c) {
    std::printf("none\n");
    return 0;
  }
  for (const auto& s : c->skipped) std::fprintf(stderr, "skipped: %s\n", s.c_str());
  const std::string blob(reinterpret_cast<const char*>(c->rank_data.data()), c->rank_data.size());
  if (c->data != state_of(c->step) || blob != blob_of(c->step)) {
    std::fprintf(stderr, "crash_helper: step %lld loaded with wrong bytes\n",
                 static_cast<long long>(c->step));
    return 1;
  }
  std::printf("step %lld\n", static_cast<long long>(c->step));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    dtrain::Context ctx = dtrain::init();
    if (argc == 4 && std::strcmp(argv[1], "save") == 0) {
      return save(ctx, argv[2], std::atoll(argv[3]));
    }
    if (argc == 3 && std::strcmp(argv[1], "load") == 0) return load(ctx, argv[2]);
    std::fprintf(stderr, "usage: crash_helper save DIR STEP | load DIR\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
