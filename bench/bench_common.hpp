// What coll_bench's parts share (coll_bench.cpp, nodes_sweep.cpp): this rank and the job's size,
// the #wrong total and the JSON report, and the timing of an operation across ranks; and MPI's
// header, included here only (the project's rule: one wrapper per component).
#pragma once

#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace coll_bench {

extern int rank;
extern int size;
extern long long total_wrong;  // result elements that differ from the exact value
extern nlohmann::ordered_json report;

// Median over `batches` of the per-op time of `reps` back-to-back calls, max over ranks (s).
double time_op(const std::function<void()>& op, int reps, int batches);
// Enough repetitions for a batch of ~50 ms, at least 1.
int reps_for(double seconds_per_op);
// time_op with reps_for of one timed call, 5 batches.
double measure(const std::function<void()>& op);
// Element i of rank r's data: integer-valued, alike on every rank but for a factor r + 1 ...
float filled(std::size_t i, int r);
// ... as fill() writes it for this rank ...
void fill(std::vector<float>& v);
// ... so that the sum over ranks is known exactly: the elements of `v` that differ from it, v[k]
// holding element `first` + k (a reduce_scatter's block starts at rank * count).
long long wrong(const std::vector<float>& v, std::size_t first = 0);
// An allgather of fill()ed blocks of `count` elements: the elements of `v` (size * count) that
// differ from their rank's input.
long long wrong_gathered(const std::vector<float>& v, std::size_t count);

// The ResNet-50-shaped gradient set (coll_bench's and shm_bench's fusion): 161 tensors, 25.56 M
// elements, 109 under 64 KiB: 53 conv/fc weights spread geometrically from 9,408 to 2.36 M
// elements, 108 batch-norm vectors of 64..2,048, and the fc bias.
std::vector<std::size_t> resnet50_shapes();

// The 1-minute load average (/proc/loadavg), printed with each figure: this machine's cores are
// shared, and a figure means little without it. "?" where there is none.
std::string load_average();

}  // namespace coll_bench
