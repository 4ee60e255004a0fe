// What a pipeline-, expert- or 3D-parallel program asks of libdtrain, on whatever ranks and nodes
// it is started on (the multi-node tests: 2 x 2 and 4 x 2 under srun, both backends): messages
// between every pair (tags, any source, sizes from 0 bytes to several MiB), an alltoallv whose
// counts differ per pair and include zeros, gather, scatter and reduce to a root, and
// sub-communicators that span nodes (split into a 2-D grid of "tensor" and "data" groups, a
// subgroup of the first and last ranks), every result checked exactly. Prints one "ok" line per
// rank, or each wrong value and exits 1.
//
// MODEL_PROBE_DIE_RANK=k MODEL_PROBE_CALL=recv|alltoallv: rank k kills itself (SIGKILL) after a
// barrier while the others wait in a receive from it or in an alltoallv; each survivor prints the
// error it got ("model_parallel_probe: rank R: ...") and exits 1: the tests check that every
// survivor names rank k.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace {

int failures = 0;
int my_rank = -1;

template <typename T>
void expect_eq(const std::string& what, T got, T want) {
  if (got == want) return;
  if (++failures <= 20) {
    std::fprintf(stderr, "model_parallel_probe: rank %d: %s: expected %s, got %s\n", my_rank,
                 what.c_str(), std::to_string(want).c_str(), std::to_string(got).c_str());
  }
}

// The value element i of the message from rank `from` to rank `to` carries: every byte of every
// message is checked against where it should have come from.
std::int32_t stamp(int from, int to, std::size_t i) {
  return static_cast<std::int32_t>(from * 1000003 + to * 7919 + static_cast<int>(i % 65521));
}

// Every rank sends to every other rank (and itself) messages of 0, 1, 16 K and 1 M elements with
// a tag per size, all posted at once; then a ring of any-source receives that name the sender.
void check_messages(dtrain::Comm& c, const std::string& where) {
  const int r = c.rank();
  const int n = c.size();
  const std::vector<std::size_t> sizes = {0, 1, 16384, 1 << 20};
  std::vector<std::vector<std::int32_t>> out;
  std::vector<std::vector<std::int32_t>> in;
  std::vector<dtrain::Work> work;
  for (int peer = 0; peer < n; ++peer) {
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      in.emplace_back(sizes[s], -1);
      work.push_back(
          c.irecv(in.back().data(), sizes[s], dtrain::DType::kInt32, peer, static_cast<int>(s)));
    }
  }
  for (int peer = 0; peer < n; ++peer) {
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      std::vector<std::int32_t> m(sizes[s]);
      for (std::size_t i = 0; i < m.size(); ++i) m[i] = stamp(r, peer, i);
      out.push_back(std::move(m));
      work.push_back(
          c.isend(out.back().data(), sizes[s], dtrain::DType::kInt32, peer, static_cast<int>(s)));
    }
  }
  for (dtrain::Work& w : work) w.wait();
  std::size_t k = 0;
  for (int peer = 0; peer < n; ++peer) {
    for (std::size_t s = 0; s < sizes.size(); ++s, ++k) {
      for (std::size_t i = 0; i < sizes[s]; i += 997) {
        expect_eq(where + " message from " + std::to_string(peer) + ", tag " + std::to_string(s) +
                      ", element " + std::to_string(i),
                  in[k][i], stamp(peer, r, i));
      }
    }
  }
  std::int32_t from = -1;
  dtrain::Work any = c.irecv(&from, 1, dtrain::DType::kInt32, dtrain::Comm::kAnySource, 77);
  const std::int32_t me = r;
  c.send(&me, 1, dtrain::DType::kInt32, (r + 1) % n, 77);
  any.wait();
  expect_eq(where + " any-source sender", any.source(), (r + n - 1) % n);
  expect_eq(where + " any-source message", from, (r + n - 1) % n);
}

// The elements rank `from` sends to rank `to`: different for every pair, 0 to a rank's own block
// and to rank 0 whenever (from + 2 * to) is a multiple of 3, up to 80,000 (312 KiB); `at_least`
// more to every rank.
std::size_t block_count(int from, int to, std::size_t at_least) {
  const auto base = static_cast<std::size_t>((from + 2 * to) % 3) * 40000;
  return at_least + (from == to ? 0 : base + static_cast<std::size_t>(to));
}

// at_least = 1 when a rank has died: every survivor then waits for a block from it (with a zero
// block from it, a survivor whose own small block to it left in its socket's buffer finishes the
// call and fails in a later one, naming the survivor that ended first instead).
void check_alltoallv(dtrain::Comm& c, const std::string& where, std::size_t at_least = 0) {
  const int r = c.rank();
  const int n = c.size();
  std::vector<std::size_t> send_counts;
  std::vector<std::size_t> send_offsets;
  std::vector<std::size_t> recv_counts;
  std::vector<std::size_t> recv_offsets;
  std::vector<std::int32_t> send;
  std::size_t total = 0;
  for (int j = 0; j < n; ++j) {
    send_offsets.push_back(send.size());
    send_counts.push_back(block_count(r, j, at_least));
    recv_offsets.push_back(total);
    recv_counts.push_back(block_count(j, r, at_least));
    total += recv_counts.back();
    for (std::size_t i = 0; i < send_counts.back(); ++i) send.push_back(stamp(r, j, i));
  }
  std::vector<std::int32_t> recv(total, -1);
  c.alltoallv(send.data(), send_counts, send_offsets, recv.data(), recv_counts, recv_offsets,
              dtrain::DType::kInt32);
  std::size_t at = 0;
  for (int j = 0; j < n; ++j) {
    for (std::size_t i = 0; i < recv_counts[static_cast<std::size_t>(j)]; ++i, ++at) {
      if (recv[at] != stamp(j, r, i)) {
        expect_eq(
            where + " alltoallv block from " + std::to_string(j) + ", element " + std::to_string(i),
            recv[at], stamp(j, r, i));
        break;
      }
    }
  }
}

// Gather, scatter and reduce of 300,000 doubles to the last rank, exact.
void check_rooted(dtrain::Comm& c, const std::string& where) {
  const int r = c.rank();
  const int n = c.size();
  const int root = n - 1;
  const std::size_t count = 300000;
  std::vector<double> mine(count);
  for (std::size_t i = 0; i < count; ++i) mine[i] = static_cast<double>(r * 1000 + i % 1000);
  std::vector<double> all(r == root ? count * static_cast<std::size_t>(n) : 0);
  c.gather(mine.data(), r == root ? all.data() : nullptr, count, dtrain::DType::kFloat64, root);
  if (r == root) {
    for (int j = 0; j < n; ++j) {
      expect_eq(where + " gather block " + std::to_string(j),
                all[static_cast<std::size_t>(j) * count + 999],
                static_cast<double>(j * 1000 + 999));
    }
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<double>(i / count);
  }
  std::vector<double> piece(count, -1);
  c.scatter(r == root ? all.data() : nullptr, piece.data(), count, dtrain::DType::kFloat64, root);
  expect_eq(where + " scatter", piece[count - 1], static_cast<double>(r));
  std::vector<double> sum(r == root ? count : 0);
  c.reduce(mine.data(), r == root ? sum.data() : nullptr, count, dtrain::DType::kFloat64,
           dtrain::ReduceOp::kSum, root);
  if (r == root) {
    expect_eq(where + " reduce", sum[1], static_cast<double>(1000 * n * (n - 1) / 2 + n));
  }
}

// The collectives of a group: allreduce small (recursive doubling) and large (the ring),
// broadcast, allgather of world ranks (the group's order), reduce_scatter, barrier.
void check_group_collectives(dtrain::Comm& g, int world_rank, const std::string& where) {
  const int r = g.rank();
  const int n = g.size();
  for (std::size_t count : {std::size_t{3}, std::size_t{300000}}) {
    std::vector<float> v(count, static_cast<float>(r + 1));
    g.allreduce(std::span<float>(v), dtrain::ReduceOp::kSum);
    expect_eq(where + " allreduce of " + std::to_string(count), v[count - 1],
              static_cast<float>(n * (n + 1) / 2));
  }
  std::int64_t b = r == n - 1 ? 4242 : 0;
  g.broadcast(&b, 1, dtrain::DType::kInt64, n - 1);
  expect_eq(where + " broadcast", b, std::int64_t{4242});
  std::vector<std::int32_t> worlds(static_cast<std::size_t>(n));
  const std::int32_t w = world_rank;
  g.allgather(&w, worlds.data(), 1, dtrain::DType::kInt32);
  expect_eq(where + " allgather: my own world rank", worlds[static_cast<std::size_t>(r)], w);
  std::vector<double> rs(static_cast<std::size_t>(n), 0.5);
  double got = 0;
  g.reduce_scatter(rs.data(), &got, 1, dtrain::DType::kFloat64, dtrain::ReduceOp::kSum);
  expect_eq(where + " reduce_scatter", got, 0.5 * n);
  g.barrier();
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v == nullptr ? fallback : std::atoi(v);
}

}  // namespace

int main() try {
  dtrain::Context ctx = dtrain::init();
  const dtrain::WorldInfo& w = ctx.world();
  my_rank = w.rank;
  dtrain::Comm& comm = ctx.comm();
  std::printf("placement: rank=%d node_id=%d host=%s backend=%s\n", w.rank, w.node_id,
              w.hostname.c_str(), std::string(comm.backend()).c_str());
  std::fflush(stdout);

  if (const int die = env_int("MODEL_PROBE_DIE_RANK", -1); die >= 0) {
    const char* call = std::getenv("MODEL_PROBE_CALL");
    const std::string what = call == nullptr ? "recv" : call;
    comm.barrier();
    if (w.rank == die) std::raise(SIGKILL);
    try {
      if (what == "alltoallv") {
        for (int i = 0; i < 1000000; ++i) check_alltoallv(comm, "world", 1);
      } else {
        std::vector<float> m(1024);
        comm.recv(m.data(), m.size(), dtrain::DType::kFloat32, die, 5);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "model_parallel_probe: rank %d: %s\n", w.rank, e.what());
      // As runtime_probe: stay a moment so that the launcher does not end a survivor before it
      // reports.
      std::this_thread::sleep_for(std::chrono::seconds(2));
      return 1;
    }
    std::fprintf(stderr, "model_parallel_probe: rank %d: expected a failure after rank %d died\n",
                 w.rank, die);
    return 1;
  }

  check_messages(comm, "world");
  check_alltoallv(comm, "world");
  check_rooted(comm, "world");

  // A 2-D grid as 3D-parallel programs make it: "tensor" groups of consecutive ranks (within a
  // node under srun's block distribution when a node holds 2) and "data" groups of every other
  // rank (across nodes), each ordered by world rank.
  const int tensor = w.size % 2 == 0 ? 2 : 1;
  std::optional<dtrain::Comm> tp = comm.split(w.rank / tensor, w.rank);
  std::optional<dtrain::Comm> dp = comm.split(w.rank % tensor, w.rank);
  if (!tp || !dp) {
    std::fprintf(stderr, "model_parallel_probe: rank %d: split left this rank out\n", w.rank);
    return 1;
  }
  expect_eq("tensor group rank", tp->rank(), w.rank % tensor);
  expect_eq("data group rank", dp->rank(), w.rank / tensor);
  for (auto* g : {&*tp, &*dp}) {
    const std::string where = g == &*tp ? "tensor group" : "data group";
    check_group_collectives(*g, w.rank, where);
    check_messages(*g, where);
    check_alltoallv(*g, where);
    check_rooted(*g, where);
  }
  // The first and the last rank, on different nodes: members only; a 2-rank group within the
  // data group (a nested group).
  const std::vector<int> ends = {0, w.size - 1};
  if (std::optional<dtrain::Comm> e = comm.subgroup(ends)) {
    check_group_collectives(*e, w.rank, "subgroup of the first and last ranks");
    check_messages(*e, "subgroup of the first and last ranks");
  }
  if (std::optional<dtrain::Comm> nested =
          dp->split(dp->rank() < 2 ? 0 : dtrain::Comm::kNoGroup, -dp->rank())) {
    expect_eq("nested group rank (reversed)", nested->rank(),
              std::min(dp->size(), 2) - 1 - dp->rank());
    check_group_collectives(*nested, w.rank, "nested group");
  }
  comm.barrier();
  if (failures > 0) return 1;
  std::printf("model_parallel_probe: rank %d: ok: messages, alltoallv, rooted and groups exact\n",
              w.rank);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "model_parallel_probe: rank %d: %s\n", my_rank, e.what());
  return 1;
}
