// A sub-communicator (Comm::split, Comm::subgroup): a Communicator over some of the context's
// ranks whose collectives are dtrain's own schedules over the context's mailbox, in the group's
// message space (point_to_point/message_space.hpp): rings (ring.hpp) for large messages,
// recursive doubling for small ones and the barrier, an allgather in log2(p) steps
// (log_step_allgather.hpp) for small ones, a binomial tree for broadcast. So a group
// costs no rendezvous and opens a connection only where a pair of its ranks exchanges bytes and
// had none (a mailbox connection each way): 256 groups at 1,024 ranks are 256 small agreements,
// not 256 rendezvous. Not yet: the shared-memory and hierarchical paths of the world's router.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "comm/communicator.hpp"
#include "comm/point_to_point/message_space.hpp"
#include "timeout.hpp"

namespace dtrain::runtime {

// `mailbox` (the world communicator's) must outlive it; `rank`: this process's rank in `space`'s
// group; `backend`: the world's backend name, which this one reports; `timeout`: its messages'
// deadline (the group's, which may differ from the mailbox's).
std::unique_ptr<Communicator> make_group_communicator(Mailbox& mailbox, MessageSpace space,
                                                      int rank, std::string backend,
                                                      Timeout timeout);

}  // namespace dtrain::runtime
