#include "comm/transport/mpi/mpi_exchanges.hpp"

#include <cstdint>
#include <utility>

#include "comm/point_to_point/mailbox_records.hpp"
#include "mpi/mpi.hpp"
#include "net/random_token.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {

std::vector<PeerProcess> exchange_node_processes(MPI_Comm node, int rank, const std::string& host) {
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  const std::string mine = encode_peer_record(this_process(rank, host));
  std::vector<char> all(kPeerRecordBytes * static_cast<std::size_t>(node_size));
  constexpr int kRecord = static_cast<int>(kPeerRecordBytes);
  check(MPI_Allgather(mine.data(), kRecord, MPI_BYTE, all.data(), kRecord, MPI_BYTE, node), "init",
        "MPI_Allgather");
  std::vector<PeerProcess> processes;
  for (int r = 0; r < node_size; ++r) {
    processes.push_back(
        decode_peer_record(all.data() + static_cast<std::size_t>(r) * kPeerRecordBytes, host));
  }
  return processes;
}

std::unique_ptr<PeerAlarm> exchange_alarm_endpoints(MPI_Comm comm, int rank, int size,
                                                    const std::string& host,
                                                    const std::vector<PeerProcess>& node_processes,
                                                    const std::optional<std::string>& alarm_fd) {
  net::Socket socket;
  AlarmEndpoint mine{host, 0};
  try {
    socket = alarm_socket(alarm_fd);
    mine.port = net::local_port(socket);
  } catch (const Error&) {
    // Out of descriptors, or no IPv4: nobody can tell this rank, which gets only the launcher's
    // banner; it must still take part in the exchange.
  }
  std::uint64_t token = rank == 0 ? net::draw_token() : 0;
  check(MPI_Bcast(&token, 1, MPI_UINT64_T, 0, comm), "init", "MPI_Bcast");
  const std::string record = encode_alarm_endpoint(mine);
  std::vector<char> all(kAlarmEndpointBytes * static_cast<std::size_t>(size));
  constexpr int kRecord = static_cast<int>(kAlarmEndpointBytes);
  check(MPI_Allgather(record.data(), kRecord, MPI_BYTE, all.data(), kRecord, MPI_BYTE, comm),
        "init", "MPI_Allgather");
  std::vector<AlarmEndpoint> endpoints;
  for (int r = 0; r < size; ++r) {
    endpoints.push_back(
        decode_alarm_endpoint(all.data() + static_cast<std::size_t>(r) * kAlarmEndpointBytes));
  }
  PeerProcess self;
  self.rank = rank;
  for (const PeerProcess& p : node_processes)
    if (p.rank == rank) self = p;
  // Whom this rank would tell is whom that could tell it: with nobody, no socket is needed.
  const std::vector<int> targets = alarm_targets(size, self);
  if (!socket.valid() || targets.empty()) return nullptr;
  return std::make_unique<PeerAlarm>(std::move(socket), token, size, endpoints, targets);
}

std::unique_ptr<Mailbox> exchange_mailbox_addresses(MPI_Comm comm, int rank, int size,
                                                    const std::string& host,
                                                    std::chrono::milliseconds timeout, bool rings) {
  MailboxListener mine = listen_for_messages(host);
  std::vector<char> all(kMailboxRecordBytes * static_cast<std::size_t>(size));
  constexpr int kRecord = static_cast<int>(kMailboxRecordBytes);
  check(MPI_Allgather(mine.record.data(), kRecord, MPI_BYTE, all.data(), kRecord, MPI_BYTE, comm),
        "init", "MPI_Allgather");
  return std::make_unique<Mailbox>(rank, size, read_mailbox_records(all.data(), size),
                                   std::move(mine.socket), timeout, TimeoutSource::kEnvironment,
                                   rings);
}

}  // namespace dtrain::runtime
