// A one-way byte stream between two processes of one node in POSIX shared memory: one writer,
// one reader, no lock (a single-producer/single-consumer ring). The point-to-point mailbox
// (point_to_point/mailbox.hpp) carries a pair's messages through one, in the same bytes as on a
// socket, so that a message within a node costs two memcpy calls and no system call.
//
// The bytes go in records, each starting on a cache line with its own written mark (its position
// in the stream, stored last) and its length, then its bytes. Why not a byte ring with a head
// counter: the reader then loads the head's line and the bytes' line or two, each a transfer
// between the cores, where a small message here is one record in one line: the reader's first
// look at it brings its mark, its length and its bytes at once (8 B one way: a head counter's ring
// alone took 0.39-0.51 us on the VM of docs/benchmarks.md, a mark in the line 0.30). A record is
// given back to the writer once read whole; the reader clears the first word of each of its lines
// but the first before (that one holds the record's own mark), so that no byte of an earlier lap
// reads as a mark.
//
// Who sleeps, and how the other side wakes it: a side with nothing to do raises its `waiting`
// flag, looks once more, and sleeps on whatever it polls (the mailbox: its socket to the peer).
// The other side, after moving bytes, takes the flag down; when it was up, the caller owes the
// sleeper a wake-up (the mailbox: one byte on that socket). The flags cost nothing while both
// sides are busy, which is when latency matters.
//
// Only the sleeper fences (raising its flag); the side that moved bytes looks at the flag
// without a fence. Why: a fence there waits until the core polling the line just written has
// given it up, which is the message's own transfer, on the path of every message (an 8 B ping-
// pong's mark, docs/benchmarks.md). Without it, a look at the flag may come before the bytes
// are visible, and so miss a flag raised in that instant (tens of ns): a sleeper must therefore
// look at the ring once more a while after it raised its flag (ShmRing::kRecheckAfter; the
// mailbox does), when any bytes written before the raising are visible. A wake-up lost to that
// race costs at most that while, and only when a message crosses the raising of a flag.
//
// Large messages may skip the ring: where the kernel lets a process read another's memory
// (process_vm_readv, cross-memory attach: same user, no ptrace restriction, one PID namespace;
// checked once, when the reader maps the ring), the writer sends only where its bytes are and
// waits for the reader's acknowledgement: one copy instead of two, and the writer need not run
// while the reader copies. The mailbox does so only where its node has fewer cores than ranks:
// with a core each, the two copies through the ring, made at once, took half the time of the
// kernel's one (Mailbox::cores_for_all_).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "comm/transport/shm/posix_shm.hpp"

namespace dtrain::runtime {

class ShmRing {
 public:
  // Bytes a ring holds. Small on purpose: a ring exists for each pair that exchanged a message
  // within a node (at most ShmRing users' kMaxRings per rank), so 256 ranks on a host hold at most
  // 256 x kMaxRings of them; a message larger than the ring streams through it.
  static constexpr std::size_t kBytes = std::size_t{64} << 10;
  // The most bytes one write() puts in one record: a stream larger than the ring goes in pieces
  // the reader gives back one by one while the writer fills the next (write_both's pair is one
  // record whatever its size, up to the ring's). Why an eighth: a record is read only once
  // written whole; a 64 KiB message took 17-20 us one way in records of the ring's size, 3.3-3.6
  // in quarters, 2.9-3.3 in eighths (as the byte ring before them), 3.3-3.6 in sixteenths.
  static constexpr std::size_t kMaxRecord = kBytes / 8;

  ShmRing() = default;
  // A new ring under a fresh name (name()), for the writer. Throws Error (kSystem) naming the call.
  static ShmRing create();
  // The ring the writer created under `name`, for the reader; the name is removed once mapped.
  static ShmRing open(const std::string& name);

  const std::string& name() const { return name_; }
  bool valid() const { return control_ != nullptr; }

  // The writer: copies up to `bytes` of `from` in, as many as there is room for (one record of at
  // most kMaxRecord); returns them.
  std::size_t write(const char* from, std::size_t bytes);
  // The writer: `first` then `second`, both or neither (whether there was room for both), made
  // visible at once: a small message's header and bytes reach the reader in one look.
  bool write_both(const char* first, std::size_t first_bytes, const char* second,
                  std::size_t second_bytes);
  // The reader: copies up to `bytes` out into `to`, as many as there are; returns them.
  std::size_t read(char* to, std::size_t bytes);
  // The reader: the next record, whole, where it lies (null when there is none yet, when read()
  // has begun it, or when it wraps around the ring's end), and its length; skip() then gives it
  // back (`bytes`: the length peek gave). For a reader that takes a small message in one step
  // instead of read()'s pieces.
  const char* peek(std::size_t& bytes) const;
  void skip(std::size_t bytes);
  // The reader's: nothing more to read now. The writer's: no room for a record of one byte.
  bool empty() const;
  bool full() const;

  // Whether the reader can read the writer's memory (the check in open()).
  bool remote_reads() const;
  // The reader: `bytes` of the writer's memory at `address` into `to`; the bytes read, or -1
  // with errno (ESRCH: the writer is gone).
  long read_writer(std::uint64_t address, char* to, std::size_t bytes) const;
  // The reader is done with one message read from the writer's memory; the writer's count.
  void acknowledge();
  std::uint64_t acknowledged() const;

  // How long after raising its flag a sleeper looks at the ring again (above): any byte written
  // before the raising is visible by then, many times over (a store leaves its core within
  // microseconds, also when its thread is switched out).
  static constexpr std::chrono::milliseconds kRecheckAfter{1};
  // For a sleeper whose flag last went up at `raised_at`: how long it may sleep at `now`, in whole
  // milliseconds rounded up (never before the look is due), until the look it owes; -1 when that
  // look is behind it.
  static int recheck_sleep_ms(std::chrono::steady_clock::time_point raised_at,
                              std::chrono::steady_clock::time_point now);

  // The reader is about to sleep (true) or is watching again (false); the writer's mirror.
  // Whether the flag went up now (it was down): the sleeper then owes the ring its look
  // kRecheckAfter later.
  bool reader_waits(bool waits);
  bool writer_waits(bool waits);
  // After writing: whether the reader was asleep (and is owed a wake-up); the flag is taken down.
  bool take_reader_waiting();
  bool take_writer_waiting();

 private:
  struct Control;
  Control* control() const { return control_; }
  // `n` bytes of `from` into the ring from byte `at` on (wrapping), not yet made visible.
  void copy_in(std::uint64_t at, const char* from, std::size_t n);
  // The writer: a record of `first` then `second` at head_, its mark stored last.
  void put_record(const char* first, std::size_t first_bytes, const char* second,
                  std::size_t second_bytes);
  // The reader: the record at tail_ has its mark (read its length into left_).
  bool next_record();
  // The reader: the record read whole goes back to the writer.
  void give_back();
  // The writer's: the tail (bytes read) it last loaded, or less than the tail now (it only
  // grows), so the room it gives is never too much. Loaded again only when that room is too
  // small: the tail's line is the reader's, and loading it at each write cost a transfer between
  // the cores on every message's path.
  std::uint64_t tail_for(std::uint64_t head, std::size_t bytes);
  std::uint64_t tail_seen_ = 0;
  std::uint64_t head_ = 0;  // the writer's: where its next record starts (only it needs it)
  // The reader's: where the record it reads starts, its next byte, and the bytes left in it.
  std::uint64_t tail_ = 0;
  std::uint64_t at_ = 0;
  std::uint64_t left_ = 0;
  PosixShm memory_;
  Control* control_ = nullptr;
  char* data_ = nullptr;
  std::string name_;
};

}  // namespace dtrain::runtime
