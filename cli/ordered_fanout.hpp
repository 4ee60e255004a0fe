// Reads many sources (a run's rank files) on a small fixed pool of threads and hands what they
// hold to the calling thread in source order, item by item, as one thread reading them one after
// the other would: the readers of a 1,024-rank run directory (`stats`, `report`, `timeline`,
// `logs --hang` / `--first-error`) parse its files on every core while their consumers, which are
// not thread-safe and depend on the order (a restart's records after the earlier attempt's), stay
// as they are. An error a source raises reaches the caller where a sequential reader meets it:
// after every item before it, so the message names the same line whatever the timing.
//
// Why a fixed pool and not a thread per file: parsing is CPU-bound, so threads beyond the cores
// add nothing but switching; and what is held in memory is bounded by the pool (each source in
// flight keeps at most kMaxChunks chunks of kChunkItems items, and at most 2 x threads sources are
// in flight), not by the number of files: 1,024 threads would each hold a stack and their parsed
// records at once.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dtrain::cli {

template <typename Item>
class OrderedFanout {
 public:
  static constexpr std::size_t kChunkItems = 1024;
  static constexpr std::size_t kMaxChunks = 4;

  // produce(i, sink) reads source i (0 <= i < n), calling sink(std::move(item)) for each item in
  // order; it may throw. consume(i, item) runs on the calling thread, source 0's items first.
  // With threads <= 1 (or one source) everything runs on the calling thread.
  using Sink = std::function<void(Item&&)>;
  using Produce = std::function<void(std::size_t, const Sink&)>;
  using Consume = std::function<void(std::size_t, Item&)>;

  static void run(std::size_t n, std::size_t threads, const Produce& produce,
                  const Consume& consume) {
    if (threads <= 1 || n <= 1) {
      for (std::size_t i = 0; i < n; ++i) produce(i, [&](Item&& item) { consume(i, item); });
      return;
    }
    OrderedFanout fanout(n, std::min(threads, n), produce);
    fanout.drain(consume);
  }

 private:
  struct Slot {
    std::deque<std::vector<Item>> chunks;
    bool done = false;
    std::exception_ptr error;
  };
  // Thrown inside a producer when the consumer has stopped (it threw): unwinds the producer.
  struct Stopped {};

  OrderedFanout(std::size_t n, std::size_t threads, const Produce& produce)
      : n_(n), window_(2 * threads), slots_(window_), produce_(produce) {
    workers_.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }

  ~OrderedFanout() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& w : workers_) w.join();
  }

  void work() {
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || next_ >= n_ || next_ < consumed_ + window_; });
        if (stop_ || next_ >= n_) return;
        i = next_++;
      }
      Slot& slot = slots_[i % window_];
      std::vector<Item> chunk;
      const auto push = [&](bool last) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || slot.chunks.size() < kMaxChunks; });
        if (stop_) throw Stopped{};
        if (!chunk.empty()) slot.chunks.push_back(std::move(chunk));
        chunk = {};
        slot.done = last;
        changed_.notify_all();
      };
      try {
        produce_(i, [&](Item&& item) {
          // Room for the whole chunk at once: an Item (a metric record) is some hundreds of
          // bytes, and growing by doubling would move each one twice more.
          if (chunk.capacity() == 0) chunk.reserve(kChunkItems);
          chunk.push_back(std::move(item));
          if (chunk.size() == kChunkItems) push(false);
        });
        push(true);
      } catch (const Stopped&) {
        return;
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!chunk.empty()) slot.chunks.push_back(std::move(chunk));
        slot.error = std::current_exception();
        slot.done = true;
        changed_.notify_all();
      }
    }
  }

  void drain(const Consume& consume) {
    for (std::size_t i = 0; i < n_; ++i) {
      Slot& slot = slots_[i % window_];
      for (;;) {
        std::vector<Item> chunk;
        std::exception_ptr error;
        bool finished = false;
        {
          std::unique_lock lock(mutex_);
          changed_.wait(lock, [&] { return !slot.chunks.empty() || slot.done; });
          if (!slot.chunks.empty()) {
            chunk = std::move(slot.chunks.front());
            slot.chunks.pop_front();
          } else {
            finished = true;
            error = slot.error;
            slot = Slot{};
            consumed_ = i + 1;
          }
        }
        changed_.notify_all();
        if (finished) {
          if (error) std::rethrow_exception(error);
          break;
        }
        for (auto& item : chunk) consume(i, item);
      }
    }
  }

  const std::size_t n_;
  const std::size_t window_;  // sources in flight at most
  std::vector<Slot> slots_;   // source i in slots_[i % window_]
  const Produce& produce_;
  std::mutex mutex_;  // guards everything below and the slots
  std::condition_variable changed_;
  std::size_t next_ = 0;      // the next source a worker takes
  std::size_t consumed_ = 0;  // sources the caller has finished
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// The threads to read a run's files with: the CPUs this process may run on, at most 4 (parsing
// stops scaling before the file system does; docs/benchmarks.md, "Records at scale").
std::size_t reader_threads();

}  // namespace dtrain::cli
