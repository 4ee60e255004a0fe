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

  // Where a producer puts its items. next() gives the slot of the next item: a default one, or,
  // once the pool has recycled chunks, an item the consumer is done with, still holding its old
  // value and buffers (the producer overwrites it: a metric record is 664 bytes with strings and
  // vectors, and constructing, moving and destroying one per line of a 19 GB run cost a third of
  // the readers' time, perf, docs/benchmarks.md "Records at scale").
  class Sink {
   public:
    // The slot of the next item; what the producer writes there counts as given when it asks for
    // the next slot or returns (a producer that throws while filling a slot has not given it).
    Item& next() const { return next_(state_); }
    // Gives `item` at once.
    void operator()(Item&& item) const {
      next() = std::move(item);
      commit_(state_);
    }

   private:
    friend class OrderedFanout;
    // Plain function pointers, not std::function: called once per line of a 19 GB run.
    Sink(Item& (*next_slot)(void*), void (*commit)(void*), void* state)
        : next_(next_slot), commit_(commit), state_(state) {}
    Item& (*next_)(void*);
    void (*commit_)(void*);
    void* state_;
  };
  // produce(i, sink) reads source i (0 <= i < n), giving each item in order through sink; it may
  // throw. consume(i, item) runs on the calling thread, source 0's items first.
  // With threads <= 1 (or one source) everything runs on the calling thread.
  using Produce = std::function<void(std::size_t, const Sink&)>;
  using Consume = std::function<void(std::size_t, Item&)>;

  static void run(std::size_t n, std::size_t threads, const Produce& produce,
                  const Consume& consume) {
    if (threads <= 1 || n <= 1) {
      // One slot, consumed as soon as it counts as given.
      struct Inline {
        Item item{};
        bool pending = false;
        std::size_t source = 0;
        const Consume* consume = nullptr;
        static void commit(void* s) {
          auto& in = *static_cast<Inline*>(s);
          if (!in.pending) return;
          in.pending = false;
          (*in.consume)(in.source, in.item);
        }
        static Item& next(void* s) {
          commit(s);
          auto& in = *static_cast<Inline*>(s);
          in.pending = true;
          return in.item;
        }
      } state;
      state.consume = &consume;
      const Sink sink(&Inline::next, &Inline::commit, &state);
      for (std::size_t i = 0; i < n; ++i) {
        state.source = i;
        state.pending = false;
        produce(i, sink);
        Inline::commit(&state);
      }
      return;
    }
    OrderedFanout fanout(n, std::min(threads, n), produce);
    fanout.drain(consume);
  }

 private:
  // Items [0, used) are this chunk's; those beyond are spares from an earlier use.
  struct Chunk {
    std::vector<Item> items;
    std::size_t used = 0;
  };
  struct Slot {
    std::deque<Chunk> chunks;
    bool done = false;
    std::exception_ptr error;
  };
  // Thrown inside a producer when the consumer has stopped (it threw): unwinds the producer.
  struct Stopped {};
  // A producer's chunk being filled, and the way back to its pool for a full one.
  struct Worker {
    OrderedFanout* pool;
    Slot* slot;
    Chunk chunk;
    // The slot last given (chunk.items[chunk.used]) counts once the producer asks for the next
    // or returns; a producer that throws while filling it has not given that item.
    bool pending = false;
  };

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

  // Hands the worker's chunk to its slot (waiting while the slot holds kMaxChunks) and takes a
  // recycled one in its place. Called with the lock held.
  void hand_over(std::unique_lock<std::mutex>& lock, Worker& w, bool last) {
    changed_.wait(lock, [&] { return stop_ || w.slot->chunks.size() < kMaxChunks; });
    if (stop_) throw Stopped{};
    if (w.chunk.used > 0) {
      w.slot->chunks.push_back(std::move(w.chunk));
      w.chunk = take_free();
    }
    w.slot->done = last;
    changed_.notify_all();
  }

  // A chunk the consumer is done with, or a new one. Called with the lock held.
  Chunk take_free() {
    if (free_.empty()) {
      Chunk c;
      c.items.reserve(kChunkItems);  // room for the whole chunk: growing would move items twice
      return c;
    }
    Chunk c = std::move(free_.back());
    free_.pop_back();
    c.used = 0;
    return c;
  }

  // The slot last given counts: a full chunk goes to the consumer.
  static void commit_item(void* state) {
    auto& w = *static_cast<Worker*>(state);
    if (!w.pending) return;
    w.pending = false;
    if (++w.chunk.used == kChunkItems) {
      std::unique_lock lock(w.pool->mutex_);
      w.pool->hand_over(lock, w, false);
    }
  }

  static Item& next_item(void* state) {
    commit_item(state);
    auto& w = *static_cast<Worker*>(state);
    w.pending = true;
    Chunk& c = w.chunk;
    if (c.used == c.items.size()) c.items.emplace_back();
    return c.items[c.used];
  }

  void work() {
    Worker w{this, nullptr, {}};
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || next_ >= n_ || next_ < consumed_ + window_; });
        if (stop_ || next_ >= n_) return;
        i = next_++;
        if (w.chunk.items.capacity() == 0) w.chunk = take_free();
      }
      w.slot = &slots_[i % window_];
      w.pending = false;
      try {
        produce_(i, Sink(&OrderedFanout::next_item, &OrderedFanout::commit_item, &w));
        commit_item(&w);
        std::unique_lock lock(mutex_);
        hand_over(lock, w, true);
      } catch (const Stopped&) {
        return;
      } catch (...) {
        w.pending = false;
        std::lock_guard lock(mutex_);
        if (w.chunk.used > 0) {
          w.slot->chunks.push_back(std::move(w.chunk));
          w.chunk = take_free();
        }
        w.slot->error = std::current_exception();
        w.slot->done = true;
        changed_.notify_all();
      }
    }
  }

  void drain(const Consume& consume) {
    Chunk chunk;
    for (std::size_t i = 0; i < n_; ++i) {
      Slot& slot = slots_[i % window_];
      for (;;) {
        std::exception_ptr error;
        bool finished = false;
        {
          std::unique_lock lock(mutex_);
          if (chunk.items.capacity() > 0) free_.push_back(std::move(chunk));
          chunk = Chunk{};
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
        for (std::size_t k = 0; k < chunk.used; ++k) consume(i, chunk.items[k]);
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
  // Chunks the consumer is done with, for the producers to fill again: at most the chunks ever
  // in flight at once (the window's, the workers' and the consumer's), so bounded as they are.
  std::vector<Chunk> free_;
  std::vector<std::thread> workers_;
};

// The threads to read a run's files with: the CPUs this process may run on, at most 4 (parsing
// stops scaling before the file system does; docs/benchmarks.md, "Records at scale").
std::size_t reader_threads();

}  // namespace dtrain::cli
