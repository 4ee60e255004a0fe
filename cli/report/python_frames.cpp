#include "report/python_frames.hpp"

#include <algorithm>

namespace dtrain::report {
namespace {

// CPython 3.11's layout (Include/internal/pycore_runtime.h, pycore_interp.h, cpython/pystate.h,
// pycore_frame.h, cpython/code.h, cpython/unicodeobject.h), 64-bit. Checked against a running
// interpreter with ctypes (every offset below read back the object it names).
constexpr std::uint64_t kRuntimeInterpretersHead = 40;  // _PyRuntimeState.interpreters.head
constexpr std::uint64_t kInterpThreadsHead = 16;        // PyInterpreterState.threads.head
constexpr std::uint64_t kThreadNext = 8;                // PyThreadState.next
constexpr std::uint64_t kThreadCframe = 56;             // PyThreadState.cframe
constexpr std::uint64_t kCframeCurrentFrame = 8;        // _PyCFrame.current_frame
constexpr std::uint64_t kFrameCode = 32;                // _PyInterpreterFrame.f_code
constexpr std::uint64_t kFramePrevious = 48;            // _PyInterpreterFrame.previous
constexpr std::uint64_t kCodeFilename = 112;            // PyCodeObject.co_filename
constexpr std::uint64_t kCodeName = 120;                // PyCodeObject.co_name
constexpr std::uint64_t kUnicodeLength = 16;            // PyASCIIObject.length
constexpr std::uint64_t kUnicodeState = 32;             // PyASCIIObject.state (bit field)
constexpr std::uint64_t kAsciiData = 48;                // sizeof(PyASCIIObject)
constexpr std::uint64_t kCompactData = 72;              // sizeof(PyCompactUnicodeObject)

constexpr int kMaxThreads = 64;
constexpr int kMaxFrames = 256;
constexpr std::int64_t kMaxName = 512;

std::optional<std::uint64_t> pointer_at(const Memory& memory, std::uint64_t address) {
  std::uint64_t value = 0;
  if (address == 0 || !memory(address, &value, sizeof value)) return std::nullopt;
  return value;
}

// A str's text: compact ASCII, or compact one-byte (Latin-1) as its bytes; else "?".
std::string text_of(const Memory& memory, std::uint64_t object) {
  std::int64_t length = 0;
  std::uint32_t state = 0;
  if (object == 0 || !memory(object + kUnicodeLength, &length, sizeof length) ||
      !memory(object + kUnicodeState, &state, sizeof state)) {
    return "?";
  }
  const unsigned kind = (state >> 2) & 7;
  const bool compact = (state >> 5) & 1;
  const bool ascii = (state >> 6) & 1;
  if (!compact || kind != 1 || length < 0) return "?";
  std::string text(static_cast<std::size_t>(std::min(length, kMaxName)), '\0');
  if (!text.empty() &&
      !memory(object + (ascii ? kAsciiData : kCompactData), text.data(), text.size())) {
    return "?";
  }
  return text;
}

std::string frame_text(const Memory& memory, std::uint64_t code) {
  const auto name = pointer_at(memory, code + kCodeName);
  const auto file = pointer_at(memory, code + kCodeFilename);
  std::string path = file ? text_of(memory, *file) : "?";
  if (const std::size_t slash = path.rfind('/'); slash != std::string::npos) {
    path.erase(0, slash + 1);
  }
  return (name ? text_of(memory, *name) : "?") + " (" + path + ")";
}

}  // namespace

bool python_layout_known(std::uint64_t version) { return (version >> 16) == 0x030B; }

std::string python_version_text(std::uint64_t version) {
  return std::to_string((version >> 24) & 0xFF) + "." + std::to_string((version >> 16) & 0xFF);
}

std::vector<std::vector<std::string>> read_python_threads(const Memory& memory,
                                                          std::uint64_t runtime) {
  std::vector<std::vector<std::string>> threads;
  const auto interp = pointer_at(memory, runtime + kRuntimeInterpretersHead);
  if (!interp || *interp == 0) return threads;
  auto thread = pointer_at(memory, *interp + kInterpThreadsHead);
  for (int t = 0; t < kMaxThreads && thread && *thread != 0; ++t) {
    std::vector<std::string> frames;  // innermost first, as the chain runs
    const auto cframe = pointer_at(memory, *thread + kThreadCframe);
    auto frame =
        cframe && *cframe ? pointer_at(memory, *cframe + kCframeCurrentFrame) : std::nullopt;
    for (int f = 0; f < kMaxFrames && frame && *frame != 0; ++f) {
      if (const auto code = pointer_at(memory, *frame + kFrameCode); code && *code != 0) {
        frames.push_back(frame_text(memory, *code));
      }
      frame = pointer_at(memory, *frame + kFramePrevious);
    }
    if (!frames.empty()) {
      std::vector<std::string> path = {std::string(kPythonThreadRoot)};
      path.insert(path.end(), frames.rbegin(), frames.rend());
      threads.push_back(std::move(path));
    }
    thread = pointer_at(memory, *thread + kThreadNext);
  }
  return threads;
}

}  // namespace dtrain::report
