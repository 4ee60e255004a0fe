// `dtrain doctor`: what each rank of a job actually got, and the mistakes that make jobs slow or
// hang, found by comparing the ranks. Pure: the command gathers one RankReport per rank (the
// kernel's cpuset, the visible GPUs, the NIC variables) and hands them all here.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dtrain::report {

struct DoctorGpu {
  std::string pci;         // full bus id, dddd:bb:dd.f
  std::string name;        // may be empty
  std::string local_cpus;  // list form: the PUs near it
  int numa = -1;
};

struct RankReport {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string host;
  std::string launcher;              // "openmpi", "slurm", ... or "none"
  std::string cpuset;                // the kernel's affinity of the process, list form
  std::vector<DoctorGpu> gpus;       // CUDA_VISIBLE_DEVICES order; the first is the rank's own
  std::vector<std::string> nics;     // NIC names on the node (the topology's)
  std::vector<std::string> netdevs;  // the node's network interfaces (if_nameindex)
  // The variables frameworks and NCCL read (MASTER_ADDR, NCCL_IB_HCA, TF_CONFIG...), as set.
  std::map<std::string, std::string> env;
  bool master_port_in_use = false;  // checked by ranks on MASTER_ADDR's host before training
};

nlohmann::json report_to_json(const RankReport& r);
RankReport report_from_json(const nlohmann::json& j);

// The variables a report records (a fixed list, so every rank reports the same names).
const std::vector<std::string>& doctor_env_names();

// Warnings, each a sentence naming the ranks, host and values: two ranks on one GPU, overlapping
// cpusets on one host, a rank whose cores are not local to its GPU, ranks that disagree on
// MASTER_ADDR/MASTER_PORT or find the port taken, NCCL/UCX told to use a NIC the node lacks.
std::vector<std::string> doctor_warnings(const std::vector<RankReport>& ranks);

// A human-readable table: one line per rank (host, local rank, GPU, cpuset, NICs).
std::string format_doctor_table(const std::vector<RankReport>& ranks);

}  // namespace dtrain::report
