// What a resumed run needs to continue exactly where it stopped: the position (epoch, step within
// it, global step), the running loss of the epoch, the parameters and the optimizer's momentum,
// encoded as the payload of a dtrain::Checkpointer checkpoint (which makes it durable and
// collective). Pure: no I/O. The payload carries its own header, so a checkpoint of another
// model or another program is refused by name instead of being loaded as numbers.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fmnist {

struct TrainPosition {
  std::int64_t epoch = 0;          // the epoch being trained
  std::int64_t step_in_epoch = 0;  // steps of it already done
  std::int64_t global_step = 0;    // steps done in the whole run
  double epoch_loss_sum = 0.0;     // sum of the averaged step losses of this epoch so far
  // What the position means: step k of an epoch is global batch k of the seed's permutation, so
  // a run may resume on another number of ranks, but not with another batch or seed.
  std::int64_t global_batch = 0;
  std::uint64_t seed = 0;
};

std::vector<std::uint8_t> encode_state(const TrainPosition& pos, std::span<const float> params,
                                       std::span<const float> velocity);

// Fills params and velocity (whose sizes say what the model expects). Throws DataError naming
// `name` for a bad magic number, an unknown version, a size that does not match the model, a
// truncated file or a checksum mismatch.
TrainPosition decode_state(std::span<const std::uint8_t> bytes, const std::string& name,
                           std::span<float> params, std::span<float> velocity);

}  // namespace fmnist
