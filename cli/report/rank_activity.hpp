// What a rank does while it is outside its collectives, from its process as the hang watch samples
// it once a second (report/hang_watch.hpp's ProcessSample, /proc/PID/stat): the live straggler
// line says why the straggler is late ("it is computing, not waiting"; "it is sleeping outside
// collectives (not computing)": a sleep, a data loader's queue, a lock). Each rank's logger tallies
// its own rank's recent samples (cli/live_watch.hpp) and publishes the most frequent activity with
// its arrivals (report/arrival_skew.hpp), so that rank 0's logger can say it of a rank on another
// node. Pure.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "report/hang_watch.hpp"

namespace dtrain::report {

enum class Activity {
  kUnknown,    // no sample outside a collective yet
  kComputing,  // CPU time advancing by half a core or more
  kSleeping,   // asleep (S) with little CPU time: a sleep, a queue, a lock, a socket
  kBlocked,    // in the kernel (D state): usually reading a file
  kStopped,    // stopped (SIGSTOP) or held by a debugger
};

// The word a file holds ("computing", "sleeping", "blocked", "stopped"; "" unknown), and back
// (kUnknown for a word of a later version).
std::string_view activity_word(Activity activity);
Activity activity_from_word(std::string_view word);

// What one sample says the rank does: `before` and `now`, its main thread's
// (/proc/PID/task/PID/stat: the program's own flow; the process's total would count worker threads
// that spin while it sleeps, as torch's OpenMP threads keep a DDP rank at 100 % CPU through its
// time.sleep, measured), taken `seconds` apart; nullopt when the rank is inside a collective at
// `now` (`inside`), or exited: such a sample says nothing of what it does outside them.
std::optional<Activity> sample_activity(const ProcessSample& before, const ProcessSample& now,
                                        double seconds, bool inside);

// The share of those `seconds` its main thread was on a CPU (0 to 1). Beside the activity because
// a one-second sample of a rank that computes 0.8 s and sleeps 0.2 s reads as computing, every
// time: what makes such a straggler late shows only in the share of time it is off the CPU.
double sample_cpu_share(const ProcessSample& before, const ProcessSample& now, double seconds);

// The last kActivitySamples samples outside collectives; the most frequent is the rank's activity
// (ties: the later-listed kind, so that a rank half computing, half asleep reads as asleep).
inline constexpr std::size_t kActivitySamples = 20;
class ActivityTally {
 public:
  // `cpu_share`: sample_cpu_share's, or negative when not known.
  void add(Activity activity, double cpu_share = -1);
  Activity most() const;
  // The mean on-CPU share of the last samples that had one; negative when none had.
  double cpu_share() const;

 private:
  std::array<Activity, kActivitySamples> ring_{};
  std::array<double, kActivitySamples> shares_{};
  std::size_t count_ = 0;  // samples added, all time
};

// On a CPU at least this share of its time outside collectives, a rank is computing.
inline constexpr double kComputingCpuShare = 0.85;

// The live straggler line's clause: "it is computing, not waiting", "it is sleeping outside
// collectives (not computing)", "it is blocked in the kernel (D state) outside collectives (not
// computing: reading files?)", "it is stopped (SIGSTOP or a debugger)"; "" for kUnknown. With its
// on-CPU share outside collectives (`cpu_share` >= 0; `others_cpu_share`, the median of the other
// ranks', when >= 0) a computing or sleeping rank is said by it: "it is computing, not waiting (on
// a CPU 97 % of its time outside collectives, the others 98 %)" at kComputingCpuShare or more, else
// "it is off the CPU 28 % of its time outside collectives, the others 3 % (sleeping, loading data,
// or waiting for a lock or a CPU: not computing then)".
std::string activity_text(Activity activity, double cpu_share = -1, double others_cpu_share = -1);

}  // namespace dtrain::report
