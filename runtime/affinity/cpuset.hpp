// A set of processing units (PUs, i.e. Linux CPU numbers = hwloc os_index), as a plain value.
// The solver computes with these and every report prints them in the list form that taskset,
// numactl, Slurm and hwloc-calc --po all accept ("0-15,64-79"), so one parser and one formatter
// serve the CLI, the environment (DTRAIN_CPUSET) and the tests.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace dtrain::affinity {

class CpuSet {
 public:
  CpuSet() = default;
  CpuSet(std::initializer_list<int> cpus);

  // Parses the list form: comma-separated indices and inclusive ranges ("0-3,8,10-11"); the empty
  // string is the empty set. Throws TopologyError naming `what` (a flag, a variable, a file) when
  // the text is malformed, e.g. "dtrain: cpuset: --cpus-allowed: expected a list such as 0-3,8,
  // got \"0-\"".
  static CpuSet parse(std::string_view text, std::string_view what = "cpuset");
  static CpuSet range(int first, int last);  // inclusive; empty when last < first

  void add(int cpu);
  void remove(int cpu);
  bool contains(int cpu) const;
  bool empty() const;
  int count() const;
  int first() const;  // -1 when empty
  int last() const;   // -1 when empty

  bool intersects(const CpuSet& other) const;
  bool is_subset_of(const CpuSet& other) const;
  CpuSet operator&(const CpuSet& other) const;
  CpuSet operator|(const CpuSet& other) const;
  CpuSet operator-(const CpuSet& other) const;
  CpuSet& operator|=(const CpuSet& other);
  bool operator==(const CpuSet& other) const;

  std::vector<int> to_vector() const;  // ascending
  std::string to_list() const;         // "0-15,64-79"; "" for the empty set

 private:
  void trim();
  // One bit per PU; no trailing zero words, so equality is word equality.
  std::vector<std::uint64_t> words_;
};

// "0-3,8": the numbers in ascending order, runs collapsed, duplicates once; the list form of
// Linux cpusets and of Slurm's task ranges ("" for none).
std::string format_ranges(std::vector<int> numbers);

}  // namespace dtrain::affinity
