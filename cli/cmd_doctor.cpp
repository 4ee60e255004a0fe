// `dtrain doctor [--json] [--bytes N] [--min-busbw GBPS]`: run inside a job (srun dtrain doctor,
// mpiexec ... dtrain doctor) or alone on a login node. Every rank reports what it really got — the
// kernel's cpuset, its GPUs, the NIC and framework variables — rank 0 prints them all with the
// mistakes found by comparing ranks (report/doctor), the versions in use, and an allreduce
// bandwidth check with a pass/fail threshold. Exit status 0 only when every check is green.
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dtrain/bandwidth.hpp>
#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "affinity/cpuset.hpp"
#include "affinity/topology.hpp"
#include "commands.hpp"
#include "common/errors.hpp"
#include "common/number_text.hpp"
#include "dtrain/config.hpp"
#include "flag_values.hpp"
#include "launch/launcher_env.hpp"
#include "process.hpp"
#include "report/doctor.hpp"
#include "report/install_check.hpp"

namespace dtrain::cli {
namespace {

struct DoctorOptions {
  bool json = false;
  std::size_t bytes = std::size_t{32} << 20;
  double min_busbw = 0.5;  // GB/s: far below any cluster fabric, far above a broken setup
  int iterations = 5;
};

affinity::CpuSet process_cpuset() {
  cpu_set_t set;
  CPU_ZERO(&set);
  affinity::CpuSet out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) out.add(cpu);
  }
  return out;
}

std::vector<std::string> network_interfaces() {
  std::vector<std::string> out;
  if (struct if_nameindex* list = if_nameindex()) {
    for (auto* i = list; i->if_index != 0; ++i) out.emplace_back(i->if_name);
    if_freenameindex(list);
  }
  return out;
}

// A port some process already listens on cannot serve this job's rendezvous.
bool port_in_use(const std::string& port_text) {
  const auto port = dtrain::parse_whole_number(port_text, 1, 65535);
  if (!port) return false;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<std::uint16_t>(*port));
  const bool in_use = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0;
  close(fd);
  return in_use;
}

report::RankReport this_rank(const dtrain::WorldInfo& world) {
  report::RankReport r;
  r.rank = world.rank;
  r.size = world.size;
  r.local_rank = world.local_rank;
  r.local_size = world.local_size;
  r.host = launch::this_hostname();
  const auto env = launch::current_environment();
  const auto launcher = launch::detect_launcher(env);
  r.launcher = launcher ? launcher->launcher : "none";
  r.cpuset = process_cpuset().to_list();
  for (const auto& name : report::doctor_env_names()) {
    if (const char* v = std::getenv(name.c_str())) r.env[name] = v;
  }
  const affinity::Node node = affinity::load_live_node();
  for (const auto& nic : node.nics) r.nics.push_back(nic.name);
  r.netdevs = network_interfaces();
  // Visible GPUs in CUDA order: CUDA_VISIBLE_DEVICES indexes the PCI-ordered list (dtrain sets
  // CUDA_DEVICE_ORDER=PCI_BUS_ID); UUIDs cannot be mapped without CUDA and are left out.
  std::vector<int> visible;
  if (auto it = r.env.find("CUDA_VISIBLE_DEVICES"); it != r.env.end()) {
    std::size_t pos = 0;
    while (pos <= it->second.size()) {
      const auto comma = std::min(it->second.find(',', pos), it->second.size());
      const std::string item = it->second.substr(pos, comma - pos);
      const auto index = dtrain::parse_whole_number(item, 0, std::numeric_limits<int>::max());
      if (index && static_cast<std::size_t>(*index) < node.gpus.size()) {
        visible.push_back(static_cast<int>(*index));
      }
      pos = comma + 1;
    }
  } else {
    for (std::size_t i = 0; i < node.gpus.size(); ++i) visible.push_back(static_cast<int>(i));
  }
  for (int i : visible) {
    const auto& g = node.gpus[static_cast<std::size_t>(i)];
    r.gpus.push_back({g.pci.to_string(), g.name, g.locality.to_list(), g.numa});
  }
  const auto addr = r.env.find("MASTER_ADDR");
  if (addr != r.env.end() && r.local_rank == 0 &&
      (addr->second == r.host || addr->second == "localhost" || addr->second == "127.0.0.1")) {
    r.master_port_in_use = port_in_use(r.env["MASTER_PORT"]);
  }
  return r;
}

// Every rank's report on every rank: one allreduce over fixed-size slots (byte values in int32,
// so any communicator can carry it).
std::vector<report::RankReport> gather_reports(dtrain::Comm& comm, const dtrain::WorldInfo& world,
                                               const report::RankReport& mine) {
  const std::string text = report::report_to_json(mine).dump();
  std::int64_t longest = static_cast<std::int64_t>(text.size());
  comm.allreduce(&longest, &longest, 1, dtrain::DType::kInt64, dtrain::ReduceOp::kMax);
  const auto slot = static_cast<std::size_t>(longest);
  std::vector<std::int32_t> slots(slot * static_cast<std::size_t>(world.size), 0);
  for (std::size_t i = 0; i < text.size(); ++i) {
    slots[static_cast<std::size_t>(world.rank) * slot + i] = static_cast<unsigned char>(text[i]);
  }
  comm.allreduce(slots.data(), slots.data(), slots.size(), dtrain::DType::kInt32,
                 dtrain::ReduceOp::kSum);
  std::vector<report::RankReport> all;
  for (int r = 0; r < world.size; ++r) {
    std::string s;
    for (std::size_t i = 0; i < slot; ++i) {
      const auto c = slots[static_cast<std::size_t>(r) * slot + i];
      if (c == 0) break;
      s.push_back(static_cast<char>(c));
    }
    all.push_back(report::report_from_json(nlohmann::json::parse(s)));
  }
  return all;
}

struct Bandwidth {
  bool measured = false;
  double seconds = 0;  // per iteration, slowest rank
  double algbw = 0;    // GB/s
  double busbw = 0;    // GB/s (dtrain/bandwidth.hpp)
  long long wrong = 0;
};

Bandwidth measure_allreduce(dtrain::Comm& comm, int rank, int size, const DoctorOptions& opts) {
  Bandwidth b;
  if (size < 2) return b;
  const std::size_t count = std::max<std::size_t>(1, opts.bytes / sizeof(float));
  // Integer-valued data sums exactly: every element must come back as 1 + 2 + ... + size.
  std::vector<float> in(count);
  std::vector<float> out(count);
  std::fill(in.begin(), in.end(), static_cast<float>(rank + 1));
  for (int i = 0; i < 2; ++i) {
    comm.allreduce(in.data(), out.data(), count, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
  }
  comm.barrier();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < opts.iterations; ++i) {
    comm.allreduce(in.data(), out.data(), count, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                   opts.iterations;
  comm.allreduce(&elapsed, &elapsed, 1, dtrain::DType::kFloat64, dtrain::ReduceOp::kMax);
  const float expected = static_cast<float>(size) * static_cast<float>(size + 1) / 2.0f;
  long long wrong = std::count_if(out.begin(), out.end(), [&](float v) { return v != expected; });
  std::int64_t wrong_all = wrong;
  comm.allreduce(&wrong_all, &wrong_all, 1, dtrain::DType::kInt64, dtrain::ReduceOp::kSum);
  b.measured = true;
  b.seconds = elapsed;
  b.algbw = static_cast<double>(count * sizeof(float)) / elapsed / 1e9;
  b.busbw = dtrain::allreduce_bus_bandwidth(b.algbw, size);
  b.wrong = wrong_all;
  return b;
}

std::string first_line_of(const std::vector<std::string>& argv) {
  try {
    const Captured c = run_capturing(argv);
    if (c.status != 0) return "not found";
    const std::string text = c.out.empty() ? c.err : c.out;
    return text.substr(0, text.find('\n'));
  } catch (const std::exception&) {
    return "not found";
  }
}

// The NCCL libdtrain's device communicator would load ("2.28.9 (/path/libnccl.so.2)"), or why it
// cannot (built without NCCL, a library not found: libdtrain's message, which says what to do).
std::string nccl_status() {
  if (!DTRAIN_HAVE_NCCL) return "not compiled in";
  try {
    const dtrain::NcclLibrary nccl = dtrain::nccl_library();
    return nccl.version + " (" + nccl.file + ")";
  } catch (const dtrain::Error& e) {
    return std::string("not loadable: ") + e.what();
  }
}

// The file the process mapped whose name starts with `prefix` ("libdtrain.so"), or "".
std::string mapped_library(std::string_view prefix) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const std::size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::size_t base = path.rfind('/') + 1;
    if (path.compare(base, prefix.size(), prefix) == 0) return path;
  }
  return "";
}

std::string resolved(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(path, ec);
  return ec ? path : canonical.string();
}

// python3 -c: exit 4 without a module dtrain, 3 without torch (dtrain.torch is not for it), else
// the imports' exception, or dtrain's path.
constexpr const char* kPythonProbe = R"(
try:
    import dtrain
except ModuleNotFoundError as e:
    if e.name == "dtrain":
        raise SystemExit(4)
    raise
try:
    import torch
except ImportError:
    raise SystemExit(3)
import dtrain.torch
print(dtrain.__file__)
)";

// What a login node can say of the installation before a job (report/install_check.hpp).
report::InstallFacts install_facts() {
  report::InstallFacts f;
  f.cli_path = resolved(self_executable());
  if (const std::string on_path = find_on_path("dtrain"); !on_path.empty()) {
    f.cli_on_path = resolved(on_path);
  }
  f.libdtrain_path = mapped_library("libdtrain.so");
  f.built_mpi_family = DTRAIN_BUILT_MPI_FAMILY;
  for (const char* launcher : {"mpiexec", "mpirun"}) {
    f.launcher = find_on_path(launcher);
    if (f.launcher.empty()) continue;
    f.launcher_version = first_line_of({f.launcher, "--version"});
    break;
  }
  if (const std::string python = find_on_path("python3"); !python.empty()) {
    // `timeout`: an import that hangs (a file system that does not answer) must not hang doctor.
    const Captured c = run_capturing({"timeout", "120", python, "-c", kPythonProbe});
    using Outcome = report::InstallFacts::PythonProbe::Outcome;
    report::InstallFacts::PythonProbe probe;
    probe.python = python;
    probe.outcome = c.status == 0   ? Outcome::kImports
                    : c.status == 4 ? Outcome::kNoModule
                    : c.status == 3 ? Outcome::kNoTorch
                                    : Outcome::kFails;
    std::string_view text = c.status == 0 ? c.out : c.err;
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    const std::size_t newline = text.rfind('\n');
    probe.line = std::string(newline == std::string_view::npos ? text : text.substr(newline + 1));
    if (c.status == 124) probe.line = "the imports did not finish in 120 s";
    f.python = probe;
  }
  return f;
}

int run_doctor(const DoctorOptions& opts) {
  if (opts.iterations < 1 || opts.bytes < sizeof(float) || opts.min_busbw < 0) {
    throw UsageError(
        "dtrain: doctor: expected --iterations >= 1, --bytes >= 4 and --min-busbw >= 0");
  }
  dtrain::Context ctx = dtrain::init();
  const dtrain::WorldInfo& world = ctx.world();
  const report::RankReport mine = this_rank(world);
  const auto reports = gather_reports(ctx.comm(), world, mine);
  const Bandwidth bw = measure_allreduce(ctx.comm(), world.rank, world.size, opts);
  if (world.rank != 0) return 0;

  const auto warnings = report::doctor_warnings(reports);
  const auto install = report::install_checks(install_facts());
  const bool install_ok = std::all_of(install.begin(), install.end(),
                                      [](const report::InstallCheck& c) { return c.ok; });
  const bool bandwidth_ok = !bw.measured || (bw.wrong == 0 && bw.busbw >= opts.min_busbw);
  const std::map<std::string, std::string> versions = {
      {"dtrain", DTRAIN_VERSION},
      {"bootstrap", world.bootstrap},
      {"communicator", std::string(ctx.comm().backend())},
      {"slurm", first_line_of({"srun", "--version"})},
      {"mpi", first_line_of({"mpirun", "--version"})},
      {"pmix (built with)", DTRAIN_BUILT_PMIX_VERSION},
      {"hwloc", affinity::hwloc_runtime_version()},
      {"cuda (built with)", DTRAIN_HAVE_CUDA ? DTRAIN_BUILT_CUDA_VERSION : "not compiled in"},
      {"nccl", nccl_status()},
  };
  if (opts.json) {
    nlohmann::json out;
    out["ranks"] = nlohmann::json::array();
    for (const auto& r : reports) out["ranks"].push_back(report::report_to_json(r));
    out["versions"] = versions;
    out["warnings"] = warnings;
    out["install"] = nlohmann::json::array();
    for (const auto& c : install) out["install"].push_back({{"ok", c.ok}, {"text", c.text}});
    out["allreduce"] = {{"measured", bw.measured},         {"bytes", opts.bytes},
                        {"seconds", bw.seconds},           {"algbw_gbps", bw.algbw},
                        {"busbw_gbps", bw.busbw},          {"wrong", bw.wrong},
                        {"min_busbw_gbps", opts.min_busbw}};
    out["ok"] = warnings.empty() && bandwidth_ok && install_ok;
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("# dtrain doctor: %d rank(s)\n%s", world.size,
                report::format_doctor_table(reports).c_str());
    std::printf("# installation\n");
    for (const auto& c : install) std::printf("%s: %s\n", c.ok ? "ok" : "WARNING", c.text.c_str());
    std::printf("# versions\n");
    for (const auto& [k, v] : versions) std::printf("%-18s %s\n", k.c_str(), v.c_str());
    std::printf("# checks\n");
    for (const auto& w : warnings) std::printf("WARNING: %s\n", w.c_str());
    if (warnings.empty())
      std::printf(
          "ok: one GPU and disjoint cores per rank, NICs exist, one "
          "rendezvous point\n");
    if (bw.measured) {
      std::printf(
          "%s: allreduce %zu bytes x %d: %.4f s, algbw %.2f GB/s, busbw %.2f GB/s "
          "(minimum %.2f), #wrong %lld\n",
          bandwidth_ok ? "ok" : "FAIL", opts.bytes, opts.iterations, bw.seconds, bw.algbw, bw.busbw,
          opts.min_busbw, bw.wrong);
    } else {
      std::printf("ok: one rank, no allreduce bandwidth to measure (run under srun or mpiexec)\n");
    }
  }
  return warnings.empty() && bandwidth_ok && install_ok ? 0 : 1;
}

}  // namespace

void register_doctor(CLI::App& app, Action& action) {
  auto opts = std::make_shared<DoctorOptions>();
  auto* cmd = app.add_subcommand(
      "doctor",
      "Check what every rank of a job got (GPU, cores, NICs, environment) and the "
      "allreduce bandwidth; run it under srun or mpiexec");
  cmd->add_flag("--json", opts->json, "Print one JSON object");
  add_whole_number_flag(*cmd, "--bytes", opts->bytes, 4, std::int64_t{1} << 40,
                        "Allreduce message size for the bandwidth check (default 33554432)");
  add_whole_number_flag(*cmd, "--iterations", opts->iterations, 1, 1000000,
                        "Timed allreduce iterations (default 5)");
  add_decimal_number_flag(*cmd, "--min-busbw", opts->min_busbw, 0, 1e6,
                          "Fail below this bus bandwidth, GB/s (nccl-tests' definition; "
                          "default 0.5)");
  cmd->callback([opts, &action] { action = [opts] { return run_doctor(*opts); }; });
}

}  // namespace dtrain::cli
