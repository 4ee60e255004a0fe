#include "messages_nodes.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "bench_common.hpp"
#include "link_rate.hpp"

namespace coll_bench {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr auto kU8 = dtrain::DType::kUInt8;
using Matrix = std::vector<std::vector<std::size_t>>;  // bytes from rank s to rank d: [s][d]

// Byte i of the block rank `s` sends to rank `d`: every block differs, so a block delivered to
// the wrong place or shifted is counted.
unsigned char value(int s, int d, std::size_t i) {
  return static_cast<unsigned char>(s * 7 + d * 13 + static_cast<int>(i % 251));
}
void fill_block(char* at, int s, int d, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) at[i] = static_cast<char>(value(s, d, i));
}
long long wrong_block(const char* at, int s, int d, std::size_t bytes) {
  long long n = 0;
  for (std::size_t i = 0; i < bytes; ++i) n += static_cast<unsigned char>(at[i]) != value(s, d, i);
  return n;
}

// The slowest rank's time of one call, from a barrier. Both through libdtrain, whose waiters
// sleep: the ranks a ping-pong leaves idle would otherwise spin in Open MPI's progress loop on
// the cores the pair's threads need (this cluster's nodes share the machine's), for dtrain's
// call and MPI's alike.
double slowest(dtrain::Comm& comm, const std::function<void()>& op) {
  comm.barrier();
  double t = MPI_Wtime();
  op();
  t = MPI_Wtime() - t;
  comm.allreduce(&t, &t, 1, dtrain::DType::kFloat64, dtrain::ReduceOp::kMax);
  return t;
}
double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Seconds the busiest node's link needs for the bytes that cross nodes (what it sends or what
// it receives, whichever is more: each direction has the link's rate), at `rate` GB/s; and that
// node's bytes.
std::pair<double, std::size_t> link_limit(const Matrix& bytes, const std::vector<int>& node,
                                          int nodes, double rate) {
  std::vector<std::size_t> out(static_cast<std::size_t>(nodes)), in(out.size());
  for (int s = 0; s < size; ++s) {
    for (int d = 0; d < size; ++d) {
      const auto ns = static_cast<std::size_t>(node[static_cast<std::size_t>(s)]);
      const auto nd = static_cast<std::size_t>(node[static_cast<std::size_t>(d)]);
      if (ns == nd) continue;
      out[ns] += bytes[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)];
      in[nd] += bytes[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)];
    }
  }
  const std::size_t most =
      std::max(*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end()));
  return {rate > 0 ? static_cast<double>(most) / (rate * 1e9) : 0, most};
}

// One row: dtrain's call and MPI's, alternating, 5 timed rounds after one untimed (which makes
// dtrain's connections and is checked by `check`, returning the wrong bytes on this rank).
struct Row {
  std::string name;
  Matrix bytes;
  std::function<void()> dtrain;
  std::function<void()> mpi;
  std::function<long long()> check;
  int legs = 1;  // messages one after the other in a call (a ping-pong's 2): times divided by it
};

// DTRAIN_BENCH_ROWS (e.g. "alltoall,gather"): only the rows whose names begin with one of its
// comma-separated words, to re-measure one call without the others' minutes; unset: every row.
bool row_selected(const std::string& name) {
  const char* env = std::getenv("DTRAIN_BENCH_ROWS");
  if (env == nullptr || *env == '\0') return true;
  std::string words = env;
  for (std::size_t at = 0; at <= words.size();) {
    const std::size_t end = std::min(words.find(',', at), words.size());
    if (end > at && name.compare(0, end - at, words, at, end - at) == 0) return true;
    at = end + 1;
  }
  return false;
}

void run_row(dtrain::Comm& comm, const Row& row, const std::vector<int>& node, int nodes,
             double rate) {
  if (!row_selected(row.name)) return;
  row.dtrain();
  long long wrong = row.check();
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  total_wrong += wrong;
  row.mpi();
  std::vector<double> d, m;
  for (int k = 0; k < 5; ++k) {
    d.push_back(slowest(comm, row.dtrain));
    m.push_back(slowest(comm, row.mpi));
  }
  const double dt = median(d) / row.legs, mt = median(m) / row.legs;
  const auto [limit, crossing] = link_limit(row.bytes, node, nodes, rate);
  if (rank != 0) return;
  std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %lld | %s |\n", row.name.c_str(),
              dt * 1e3, mt * 1e3, static_cast<double>(crossing) / kMiB, limit * 1e3,
              limit > 0 ? limit / dt : 0, mt / dt, wrong, load_average().c_str());
  std::fflush(stdout);
  report["messages"].push_back({{"op", row.name},
                                {"dtrain_s", dt},
                                {"mpi_s", mt},
                                {"busiest_node_bytes", crossing},
                                {"limit_s", limit},
                                {"wrong", wrong}});
}

int as_int(std::size_t v) { return static_cast<int>(v); }

// alltoallv with `bytes` (dtrain's call and MPI_Alltoallv on the same buffers); alltoall when
// every block is one size.
Row alltoall_row(const std::string& name, Matrix bytes, std::vector<char>& in,
                 std::vector<char>& out, dtrain::Comm& comm) {
  const auto me = static_cast<std::size_t>(rank);
  std::vector<std::size_t> sc(bytes[me]), so(sc.size()), rc(sc.size()), ro(sc.size());
  for (std::size_t r = 0; r < sc.size(); ++r) rc[r] = bytes[r][me];
  for (std::size_t r = 1; r < sc.size(); ++r) so[r] = so[r - 1] + sc[r - 1];
  for (std::size_t r = 1; r < sc.size(); ++r) ro[r] = ro[r - 1] + rc[r - 1];
  in.assign(so.back() + sc.back(), 0);
  out.assign(ro.back() + rc.back(), 0);
  for (std::size_t r = 0; r < sc.size(); ++r) fill_block(&in[so[r]], rank, as_int(r), sc[r]);
  const bool equal = std::all_of(sc.begin(), sc.end(), [&](std::size_t b) { return b == sc[0]; }) &&
                     std::all_of(rc.begin(), rc.end(), [&](std::size_t b) { return b == sc[0]; });
  std::vector<int> isc(sc.size()), iso(sc.size()), irc(sc.size()), iro(sc.size());
  std::transform(sc.begin(), sc.end(), isc.begin(), as_int);
  std::transform(so.begin(), so.end(), iso.begin(), as_int);
  std::transform(rc.begin(), rc.end(), irc.begin(), as_int);
  std::transform(ro.begin(), ro.end(), iro.begin(), as_int);
  Row row{name, std::move(bytes), {}, {}, {}};
  if (equal) {
    row.dtrain = [&comm, &in, &out, n = sc[0]] { comm.alltoall(in.data(), out.data(), n, kU8); };
    row.mpi = [&in, &out, n = as_int(sc[0])] {
      MPI_Alltoall(in.data(), n, MPI_BYTE, out.data(), n, MPI_BYTE, MPI_COMM_WORLD);
    };
  } else {
    row.dtrain = [&comm, &in, &out, sc, so, rc, ro] {
      comm.alltoallv(in.data(), sc, so, out.data(), rc, ro, kU8);
    };
    row.mpi = [&in, &out, isc, iso, irc, iro] {
      MPI_Alltoallv(in.data(), isc.data(), iso.data(), MPI_BYTE, out.data(), irc.data(), iro.data(),
                    MPI_BYTE, MPI_COMM_WORLD);
    };
  }
  row.check = [&out, rc, ro] {
    long long n = 0;
    for (std::size_t r = 0; r < rc.size(); ++r)
      n += wrong_block(&out[ro[r]], as_int(r), rank, rc[r]);
    return n;
  };
  return row;
}

}  // namespace

namespace {

Matrix zeros() {
  return Matrix(static_cast<std::size_t>(size),
                std::vector<std::size_t>(static_cast<std::size_t>(size)));
}

// 64 MiB from rank 0 to `peer` and back; the time of one way.
Row ping_pong_row(int peer, std::vector<char>& buf, dtrain::Comm& comm) {
  constexpr std::size_t kBytes = 64 * kMiB;
  Matrix bytes = zeros();
  bytes[0][static_cast<std::size_t>(peer)] = kBytes;
  bytes[static_cast<std::size_t>(peer)][0] = kBytes;
  buf.assign(kBytes, 0);
  if (rank == 0) fill_block(buf.data(), 0, peer, kBytes);
  const auto trip = [peer](const auto& send, const auto& recv) {
    if (rank == 0) {
      send(0, peer);
      recv(peer);
    } else if (rank == peer) {
      recv(0);
      send(peer, 0);
    }
  };
  Row row{"send/recv 64 MiB, rank 0 <-> " + std::to_string(peer), std::move(bytes), {}, {}, {}, 2};
  row.dtrain = [trip, &buf, &comm] {
    trip([&](int, int to) { comm.send(buf.data(), buf.size(), kU8, to, 5); },
         [&](int from) { comm.recv(buf.data(), buf.size(), kU8, from, 5); });
  };
  row.mpi = [trip, &buf] {
    const int n = as_int(buf.size());
    trip([&](int, int to) { MPI_Send(buf.data(), n, MPI_BYTE, to, 5, MPI_COMM_WORLD); },
         [&](int from) {
           MPI_Recv(buf.data(), n, MPI_BYTE, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
         });
  };
  // After a round trip the bytes rank 0 sent are back where they started, on both ranks.
  row.check = [peer, &buf] {
    return rank == 0 || rank == peer ? wrong_block(buf.data(), 0, peer, buf.size()) : 0LL;
  };
  return row;
}

// gather (to rank 0) or scatter (from rank 0) of `block` bytes per rank.
Row rooted_row(bool gather, std::size_t block, std::vector<char>& in, std::vector<char>& out,
               dtrain::Comm& comm) {
  Matrix bytes = zeros();
  const auto all = static_cast<std::size_t>(size) * block;
  for (std::size_t r = 1; r < bytes.size(); ++r) (gather ? bytes[r][0] : bytes[0][r]) = block;
  in.assign(gather || rank == 0 ? (gather ? block : all) : 0, 0);
  out.assign(gather ? (rank == 0 ? all : 0) : block, 0);
  if (gather) fill_block(in.data(), rank, 0, block);
  for (int r = 0; !gather && rank == 0 && r < size; ++r) {
    fill_block(&in[static_cast<std::size_t>(r) * block], 0, r, block);
  }
  const int n = as_int(block);
  Row row{std::string(gather ? "gather" : "scatter") + " " + std::to_string(block / kMiB) +
              " MiB per rank, root 0",
          std::move(bytes),
          {},
          {},
          {}};
  if (gather) {
    row.dtrain = [&comm, &in, &out, block] { comm.gather(in.data(), out.data(), block, kU8, 0); };
    row.mpi = [&in, &out, n] {
      MPI_Gather(in.data(), n, MPI_BYTE, out.data(), n, MPI_BYTE, 0, MPI_COMM_WORLD);
    };
    row.check = [&out, block] {
      long long w = 0;
      for (int r = 0; rank == 0 && r < size; ++r) {
        w += wrong_block(&out[static_cast<std::size_t>(r) * block], r, 0, block);
      }
      return w;
    };
  } else {
    row.dtrain = [&comm, &in, &out, block] { comm.scatter(in.data(), out.data(), block, kU8, 0); };
    row.mpi = [&in, &out, n] {
      MPI_Scatter(in.data(), n, MPI_BYTE, out.data(), n, MPI_BYTE, 0, MPI_COMM_WORLD);
    };
    row.check = [&out, block] { return wrong_block(out.data(), 0, rank, block); };
  }
  return row;
}

// Node of each rank, numbered by first appearance; and the number of nodes.
std::pair<std::vector<int>, int> nodes_of(const std::vector<char>& hosts) {
  std::vector<std::string> seen;
  std::vector<int> node;
  for (int r = 0; r < size; ++r) {
    const std::string h(&hosts[static_cast<std::size_t>(r) * 256]);
    auto at = std::find(seen.begin(), seen.end(), h);
    if (at == seen.end()) at = seen.insert(seen.end(), h);
    node.push_back(static_cast<int>(at - seen.begin()));
  }
  return {node, static_cast<int>(seen.size())};
}

}  // namespace

void messages_nodes(dtrain::Comm& comm, const std::vector<char>& hosts) {
  const auto [peer, hosts_seen] = other_node(hosts);
  const auto [node, nodes] = nodes_of(hosts);
  double one_way = 0;
  double both = 0;
  if (peer > 0) std::tie(one_way, both) = link_rates(peer);
  if (rank == 0) {
    std::printf(
        "# link rank 0 -> rank %d (MPI, 64 MiB): one-way %.4f GB/s, both ways at once %.4f GB/s "
        "each; limit: the busiest node's bytes to or from other nodes at the one-way rate; each "
        "time the median of 5, slowest rank\n"
        "| call | dtrain ms | MPI ms | busiest node MiB | limit ms | limit/dtrain | MPI/dtrain "
        "| #wrong | load |\n|---|---|---|---|---|---|---|---|---|\n",
        peer, one_way, both);
    report["messages"] = nlohmann::json::array();
    report["link"] = {{"nodes", hosts_seen}, {"one_way_GBps", one_way}, {"both_ways_GBps", both}};
  }
  std::vector<char> in, out;
  if (peer > 0) run_row(comm, ping_pong_row(peer, in, comm), node, nodes, one_way);
  const auto n = static_cast<std::size_t>(size);
  Matrix even = zeros(), uneven = zeros();
  // alltoallv: 1 to 4 units a block, in a pattern that differs between senders and receivers,
  // 64 MiB per rank on average.
  const std::size_t unit = 64 * kMiB / (n * 5 / 2) / 64 * 64;
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t d = 0; d < n; ++d) {
      even[s][d] = 64 * kMiB / n;
      uneven[s][d] = unit * (1 + (s + 2 * d) % 4);
    }
  }
  run_row(comm, alltoall_row("alltoall 64 MiB per rank", even, in, out, comm), node, nodes,
          one_way);
  run_row(comm,
          alltoall_row("alltoallv ~64 MiB per rank, blocks of 1-4 units", uneven, in, out, comm),
          node, nodes, one_way);
  run_row(comm, rooted_row(true, 16 * kMiB, in, out, comm), node, nodes, one_way);
  run_row(comm, rooted_row(false, 16 * kMiB, in, out, comm), node, nodes, one_way);
}

}  // namespace coll_bench
